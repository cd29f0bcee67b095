/* utf8.h - making text from outside (task output, messages) valid UTF-8. */
#ifndef PCTL_CORE_UTF8_H
#define PCTL_CORE_UTF8_H

#include <stddef.h>

/* A copy of s[0..len) with every invalid UTF-8 sequence and every NUL
 * replaced by U+FFFD, so it can go into JSON.  NULL on allocation
 * failure. */
char *pctl_utf8_clean(const char *s, size_t len);

/* 1 if s[0..len) is valid UTF-8 without NUL (what JSON text can carry
 * unchanged), else 0.  Can't fail. */
int pctl_utf8_valid(const char *s, size_t len);

/* The length of the character at p that must not be shown as it is (a
 * terminal's or a picture's text), or 0: C0 controls, DEL, C1 controls,
 * and the controls that reorder text (U+061C, U+200E, U+200F,
 * U+202A..U+202E, U+2066..U+2069).  p is NUL-terminated.  Can't fail. */
size_t pctl_unsafe_len(const unsigned char *p);

#endif
