package planctl

/*
#cgo pkg-config: planctl
#include <stdlib.h>
#include <string.h>
#include "planctl.h"
*/
import "C"

import "unsafe"

// cstr returns a C copy of s, to be released with free; "" gives NULL
// when null is true.
func cstr(s string) *C.char { return C.CString(s) }

func cstrOrNil(s string) *C.char {
	if s == "" {
		return nil
	}
	return C.CString(s)
}

func free(p *C.char) {
	if p != nil {
		C.free(unsafe.Pointer(p))
	}
}

// takeString copies a string the library handed out through a char **out
// and releases it with planctl_free.
func takeString(p *C.char) []byte {
	if p == nil {
		return nil
	}
	b := C.GoBytes(unsafe.Pointer(p), C.int(C.strlen(p)))
	C.planctl_free(unsafe.Pointer(p))
	return b
}

func unsafePointer(p *C.char) unsafe.Pointer { return unsafe.Pointer(p) }

// LibVersion is the version of the libplanctl linked ("0.1.0").
func LibVersion() string { return C.GoString(C.planctl_libversion()) }

// HeaderVersion is the version of planctl.h the package was built with.
const HeaderVersion = C.PLANCTL_VERSION
