//go:build !cgo

package planctl

// The planctl package calls libplanctl, a C library, through cgo: it cannot
// be built with CGO_ENABLED=0 (or when cross-compiling, where Go turns cgo
// off unless CC names a C compiler for the target).  Build with
// CGO_ENABLED=1, a C compiler, and libplanctl installed where pkg-config
// finds it (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig).
//
// The line below does not compile on purpose, so that the error names why.
var _ = planctl_package_needs_cgo__build_with_CGO_ENABLED_1_and_libplanctl_installed
