module planctl.dev/planctl

go 1.19
