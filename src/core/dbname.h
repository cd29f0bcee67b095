/* dbname.h - what kind of database a name given to planctl_open() is. */
#ifndef PCTL_CORE_DBNAME_H
#define PCTL_CORE_DBNAME_H

/* Whether name is a PostgreSQL URI (postgres:// or postgresql://); any
 * other name is a SQLite file.  Can't fail; NULL is not a URI. */
int pctl_is_server_uri(const char *name);

#endif
