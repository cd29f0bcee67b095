/* embed.h - the SQL files embedded at build time (cmake/embed_sql.cmake). */
#ifndef PCTL_STORE_EMBED_H
#define PCTL_STORE_EMBED_H

typedef struct pctl_embedded_sql {
    int version;      /* the NNNN of migrations/NNNN_name.sql */
    const char *name; /* "0001_init" */
    const char *sql;
} pctl_embedded_sql;

/* migrations/NNNN_*.sql in order; pctl_migrations[i].version == i + 1. */
extern const pctl_embedded_sql pctl_migrations[];
extern const int pctl_migrations_count;

/* src/store/sql/sqlite.sql: the SQLite backend's named statements, each
 * introduced by a line "-- name: NAME". */
extern const char pctl_queries_sqlite[];

/* migrations/postgres/NNNN_*.sql in order (0001 is the whole schema at its
 * version; a later NNNN is SQLite's NNNN), and src/store/sql/postgres.sql. */
extern const pctl_embedded_sql pctl_pg_migrations[];
extern const int pctl_pg_migrations_count;
extern const char pctl_queries_postgres[];

#endif
