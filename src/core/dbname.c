/* dbname.c - what kind of database a name is: the one rule that both the
 * backend list (store/backends.c) and the PostgreSQL backend's URI parser
 * read, kept below them both. */
#include "core/dbname.h"

#include <string.h>

int pctl_is_server_uri(const char *name)
{
    return name && (strncmp(name, "postgres://", 11) == 0 ||
                    strncmp(name, "postgresql://", 13) == 0);
}
