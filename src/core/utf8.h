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

#endif
