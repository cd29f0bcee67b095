/* param.c - reading a parsed request's query and form fields: what
 * the pages (pages.c) and the API (api.c) both ask of the request that
 * the router (route.c) parsed. */
#include <string.h>

#include "web/web.h"

const char *pctl_web_param(const web_req *r, const char *key)
{
    int i;

    for (i = 0; i < r->nq; i++)
        if (!strcmp(r->q[i].key, key))
            return r->q[i].value;
    return NULL;
}
