module planctl.test/sigchld

go 1.19
