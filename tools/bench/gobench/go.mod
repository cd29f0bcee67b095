module planctl.dev/gobench

go 1.19

require planctl.dev/planctl v0.0.0

replace planctl.dev/planctl => ../../../src/go
