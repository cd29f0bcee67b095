/* testutil.h - helpers shared by the unit tests: temp dirs, files, the
 * database under test. */
#ifndef PCTL_TESTUTIL_H
#define PCTL_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Creates a fresh temporary directory (removed by tu_rmtree) and returns
 * its path in a static buffer owned by the caller's copy. */
char *tu_mkdtemp(void);
/* rm -rf path.  Returns 0 on success. */
int tu_rmtree(const char *path);
/* Reads a whole file into a NUL-terminated malloc'd buffer; *len if not
 * NULL.  NULL on failure. */
char *tu_read_file(const char *path, size_t *len);
/* Writes len bytes to path (mode 0644).  Returns 0 on success. */
int tu_write_file(const char *path, const void *data, size_t len);
/* malloc'd printf. */
char *tu_fmt(const char *fmt, ...);

#endif
