/* version.c - built against the installed planctl: the header's version
 * macros agree with each other, with the library actually linked and with
 * the version the build gave the package (argv[1]). */
#include <planctl.h>
#include <stdio.h>
#include <string.h>

#define STR_(x) #x
#define STR(x) STR_(x)

int main(int argc, char **argv)
{
    const char *parts = STR(PLANCTL_VERSION_MAJOR) "." STR(
        PLANCTL_VERSION_MINOR) "." STR(PLANCTL_VERSION_PATCH);
    long number = PLANCTL_VERSION_MAJOR * 1000000L +
                  PLANCTL_VERSION_MINOR * 1000L + PLANCTL_VERSION_PATCH;
    int bad = 0;

    if (argc != 2) {
        fprintf(stderr, "usage: version EXPECTED\n");
        return 2;
    }
    if (strcmp(PLANCTL_VERSION, parts) != 0) {
        fprintf(stderr, "PLANCTL_VERSION \"%s\" but the parts say \"%s\"\n",
                PLANCTL_VERSION, parts);
        bad = 1;
    }
    if (number != PLANCTL_VERSION_NUMBER) {
        fprintf(stderr, "PLANCTL_VERSION_NUMBER %ld, expected %ld\n",
                (long)PLANCTL_VERSION_NUMBER, number);
        bad = 1;
    }
    if (strcmp(planctl_libversion(), PLANCTL_VERSION) != 0) {
        fprintf(stderr, "planctl_libversion() \"%s\", header \"%s\"\n",
                planctl_libversion(), PLANCTL_VERSION);
        bad = 1;
    }
    if (strcmp(PLANCTL_VERSION, argv[1]) != 0) {
        fprintf(stderr,
                "planctl.h says %s but the build (CMake project) says %s\n",
                PLANCTL_VERSION, argv[1]);
        bad = 1;
    }
    if (!bad)
        printf("version %s: header, library and package agree\n",
               planctl_libversion());
    return bad;
}
