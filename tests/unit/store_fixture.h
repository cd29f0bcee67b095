/* store_fixture.h - definitions and helpers shared by the store tests. */
#ifndef PCTL_STORE_FIXTURE_H
#define PCTL_STORE_FIXTURE_H

/* zookeeper@0.2.0: parameters with and without triggers, every plan kind
 * of DESIGN §4, serial and parallel phases. */
#define ZK_V2                                                                  \
    "{\"name\": \"zookeeper\", \"version\": \"0.2.0\",\n"                      \
    " \"parameters\": [\n"                                                     \
    "   {\"name\": \"NODE_COUNT\", \"default\": \"3\"},\n"                     \
    "   {\"name\": \"MEMORY\", \"default\": \"1Gi\"},\n"                       \
    "   {\"name\": \"BACKUP_NAME\", \"required\": false,"                      \
    "    \"trigger\": \"backup\"}],\n"                                         \
    " \"tasks\": [\n"                                                          \
    "   {\"name\": \"render\", \"kind\": \"Dummy\"},\n"                        \
    "   {\"name\": \"wait\", \"kind\": \"Dummy\", \"spec\": {\"done\": true}}" \
    "],\n"                                                                     \
    " \"plans\": {\n"                                                          \
    "   \"deploy\": {\"phases\": [\n"                                          \
    "     {\"name\": \"nodes\", \"strategy\": \"parallel\", \"steps\": [\n"    \
    "       {\"name\": \"node-0\", \"tasks\": [\"render\", \"wait\"],"         \
    "        \"retry\": {\"attempts\": 5}},\n"                                 \
    "       {\"name\": \"node-1\", \"tasks\": [\"render\"]}]},\n"              \
    "     {\"name\": \"check\", \"steps\": [\n"                                \
    "       {\"name\": \"ping\", \"tasks\": [\"wait\"]}]}]},\n"                \
    "   \"update\": {\"phases\": [{\"name\": \"roll\", \"steps\": ["           \
    "     {\"name\": \"restart\", \"tasks\": [\"wait\"]}]}]},\n"               \
    "   \"backup\": {\"phases\": [{\"name\": \"dump\", \"steps\": ["           \
    "     {\"name\": \"copy\", \"tasks\": [\"wait\"]}]}]},\n"                  \
    "   \"cleanup\": {\"phases\": [{\"name\": \"remove\", \"steps\": ["        \
    "     {\"name\": \"rm\", \"tasks\": [\"wait\"]}]}]}\n"                     \
    " }}\n"

/* 0.3.0 has an upgrade plan; 0.4.0 only deploy and update; 0.5.0 only
 * deploy, and a new required parameter. */
#define ZK_V3                                                                  \
    "{\"name\": \"zookeeper\", \"version\": \"0.3.0\","                        \
    " \"parameters\": [{\"name\": \"NODE_COUNT\", \"default\": \"3\"}],"       \
    " \"tasks\": [{\"name\": \"wait\", \"kind\": \"Dummy\"}],"                 \
    " \"plans\": {"                                                            \
    "   \"deploy\": {\"phases\": [{\"name\": \"a\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]},"                       \
    "   \"update\": {\"phases\": [{\"name\": \"a\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]},"                       \
    "   \"upgrade\": {\"phases\": [{\"name\": \"a\", \"steps\": ["             \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]}}}"

#define ZK_V4                                                                  \
    "{\"name\": \"zookeeper\", \"version\": \"0.4.0\","                        \
    " \"tasks\": [{\"name\": \"wait\", \"kind\": \"Dummy\"}],"                 \
    " \"plans\": {"                                                            \
    "   \"deploy\": {\"phases\": [{\"name\": \"a\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]},"                       \
    "   \"update\": {\"phases\": [{\"name\": \"a\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]}}}"

#define ZK_V5                                                                  \
    "{\"name\": \"zookeeper\", \"version\": \"0.5.0\","                        \
    " \"parameters\": [{\"name\": \"ZONE\", \"required\": true}],"             \
    " \"tasks\": [{\"name\": \"wait\", \"kind\": \"Dummy\"}],"                 \
    " \"plans\": {"                                                            \
    "   \"deploy\": {\"phases\": [{\"name\": \"a\", \"steps\": ["              \
    "     {\"name\": \"s\", \"tasks\": [\"wait\"]}]}]}}}"

/* No cleanup plan: delete removes at once. */
#define SIMPLE                                                                 \
    "{\"name\": \"simple\", \"version\": \"1\","                               \
    " \"tasks\": [{\"name\": \"t\", \"kind\": \"Dummy\"}],"                    \
    " \"plans\": {\"deploy\": {\"phases\": [{\"name\": \"p\", \"steps\": ["    \
    "   {\"name\": \"s\", \"tasks\": [\"t\"]}]}]}}}"

#endif
