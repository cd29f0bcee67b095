/*
 * xmlcheck.h - a small XML 1.0 well-formedness checker for the tests, so
 * that the SVG timeline can be parsed without a dependency beyond the
 * project's (no libxml2, no python).
 *
 * It checks what a browser's XML parser would refuse: the text is UTF-8
 * made of characters XML allows; there is one root element and every tag
 * is closed in order; names are names; every attribute is quoted, unique
 * in its tag and free of '<'; every '&' starts a known entity (amp, lt,
 * gt, quot, apos) or a character reference to an allowed character;
 * comments, CDATA sections and processing instructions are closed and
 * comments hold no "--".  A document type declaration is refused (the
 * timeline has none, and an internal subset would need a real parser).
 */
#ifndef PLANCTL_TEST_XMLCHECK_H
#define PLANCTL_TEST_XMLCHECK_H

#include <stddef.h>

typedef struct xml_report {
    /* On success: */
    char root[64];   /* the root element's name (cut at 63 bytes) */
    size_t elements; /* how many elements */
    size_t depth;    /* the deepest nesting, the root being 1 */
    /* On failure: where (1-based; the column counts bytes) and why. */
    size_t line, col;
    char error[160];
} xml_report;

/* Checks len bytes of text.  Returns 0 when they are a well-formed XML
 * document, -1 otherwise with the first problem in *out.  Can't fail
 * otherwise (nesting is limited to 256 levels, reported as a problem). */
int xml_check(const char *text, size_t len, xml_report *out);

#endif
