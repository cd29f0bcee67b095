/* test_xmlcheck.c - the well-formedness checker the SVG case relies on
 * accepts well-formed documents and refuses each kind of malformed one,
 * so a broken picture cannot pass as a good one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "xmlcheck.h"

static int check(const char *text, xml_report *r)
{
    return xml_check(text, strlen(text), r);
}

static void test_accepts(void **state)
{
    static const struct {
        const char *text, *root;
        size_t elements, depth;
    } cases[] = {
        {"<a/>", "a", 1, 1},
        {"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg "
         "xmlns=\"http://www.w3.org/2000/svg\"><g><rect x='1' y=\"2\"/>"
         "</g></svg>\n",
         "svg", 3, 2},
        {"\xef\xbb\xbf<a>x &amp; &lt;y&gt; &quot;&apos; &#65;&#x1F600;</a>",
         "a", 1, 1},
        {"<!-- before --><?pi data?>\n<a b=\"&amp;&#10;\" c = 'x\"y'>"
         "<![CDATA[<not> & markup]]><!-- - --></a>\n<!-- after -->\n",
         "a", 1, 1},
        {"<a><b><c><d/></c></b><b/></a>", "a", 5, 3},
        {"<title>caf\xc3\xa9 \xe2\x80\xa6 \xef\xbf\xbd \xf0\x9f\x98\x80"
         "</title>",
         "title", 1, 1},
        {"<a\n  x=\"1\"\n/>", "a", 1, 1},
    };
    size_t i;
    xml_report r;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (check(cases[i].text, &r) != 0)
            fail_msg("case %zu refused: %zu:%zu: %s", i, r.line, r.col,
                     r.error);
        assert_string_equal(r.root, cases[i].root);
        assert_int_equal(r.elements, cases[i].elements);
        assert_int_equal(r.depth, cases[i].depth);
    }
}

static void test_refuses(void **state)
{
    static const struct {
        const char *text, *error;
        size_t line, col;
    } cases[] = {
        {"", "no root element", 1, 1},
        {"  \n", "no root element", 2, 1},
        {"<a>", "<a> is not closed", 1, 1},
        {"<a><b></a>", "</a> closes <b>", 1, 7},
        {"<a></b>", "</b> closes <a>", 1, 4},
        {"<a/><b/>", "a second root element", 1, 5},
        {"text<a/>", "text before the root element", 1, 1},
        {"<a/>text", "text after the root element", 1, 5},
        {"<a x=1/>", "value of attribute x is not quoted", 1, 6},
        {"<a x=\"1/>", "value of attribute x is not closed", 1, 4},
        {"<a x=\"1\" x=\"2\"/>", "attribute x given twice", 1, 10},
        {"<a x=\"1\"y=\"2\"/>", "expected white space before an attribute", 1,
         9},
        {"<a x=\"<\"/>", "'<' in the value of attribute x", 1, 7},
        {"<a x/>", "expected '=' after attribute x", 1, 5},
        {"<a>&nbsp;</a>", "unknown entity &nbsp;", 1, 4},
        {"<a>AT&T</a>", "entity reference without ';'", 1, 6},
        {"<a>& b</a>", "expected an entity name after '&'", 1, 5},
        {"<a>&#;</a>", "malformed character reference", 1, 4},
        {"<a>&#x0;</a>",
         "character reference to a character XML does not allow", 1, 4},
        {"<a>&#xFFFE;</a>",
         "character reference to a character XML does not allow", 1, 4},
        {"<a x=\"&bogus;\"/>", "unknown entity &bogus;", 1, 7},
        {"<a>\x01</a>", "character U+0001 is not allowed in XML", 1, 4},
        {"<a>\x1b[31m</a>", "character U+001B is not allowed in XML", 1, 4},
        {"<a>\xef\xbf\xbf</a>", "character U+FFFF is not allowed in XML", 1, 4},
        {"<a>\xff</a>", "byte 0xff is not UTF-8", 1, 4},
        {"<a>\xc3</a>", "invalid UTF-8 sequence", 1, 4},
        {"<a>\xc0\xaf</a>", "byte 0xc0 is not UTF-8", 1, 4},
        {"<a>\xe0\x80\xaf</a>", "overlong UTF-8 sequence", 1, 4},
        {"<a>\xed\xa0\x80</a>", "character U+D800 is not allowed in XML", 1, 4},
        {"<a><!-- a -- b --></a>", "\"--\" inside a comment", 1, 11},
        {"<a><!-- open</a>", "comment is not closed", 1, 4},
        {"<a><![CDATA[x</a>", "CDATA section is not closed", 1, 4},
        {"<a>]]></a>", "\"]]>\" in text", 1, 4},
        {"<a><?pi</a>", "processing instruction is not closed", 1, 4},
        {"<a/>\n<?xml version=\"1.0\"?>",
         "XML declaration not at the very "
         "start",
         2, 1},
        {"<?xml encoding=\"UTF-8\"?><a/>",
         "XML declaration without a "
         "version",
         1, 1},
        {"<!DOCTYPE svg><svg/>",
         "document type declarations are not "
         "supported",
         1, 1},
        {"<1a/>", "expected an element name after '<'", 1, 2},
        {"<a></ a>", "expected an element name after '</'", 1, 6},
        {"<a></a x>", "end tag is not closed", 1, 4},
        {"<a x=\"1\"", "tag is not closed", 1, 1},
        {"<a><!ELEMENT x></a>", "unexpected markup declaration", 1, 4},
    };
    size_t i;
    xml_report r;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (check(cases[i].text, &r) == 0)
            fail_msg("case %zu accepted: %s", i, cases[i].text);
        if (strcmp(r.error, cases[i].error) != 0 || r.line != cases[i].line ||
            r.col != cases[i].col)
            fail_msg("case %zu: got %zu:%zu: %s; want %zu:%zu: %s", i, r.line,
                     r.col, r.error, cases[i].line, cases[i].col,
                     cases[i].error);
    }
}

/* A NUL byte is not a character XML allows, so text cut short by one
 * cannot pass. */
static void test_nul(void **state)
{
    xml_report r;

    (void)state;
    assert_int_equal(xml_check("<a>\0</a>", 8, &r), -1);
    assert_string_equal(r.error, "character U+0000 is not allowed in XML");
}

/* Nesting is bounded, and reported rather than overflowing. */
static void test_depth(void **state)
{
    char text[300 * 7 + 1];
    size_t i, n = 0;
    xml_report r;

    (void)state;
    for (i = 0; i < 300; i++)
        n += (size_t)sprintf(text + n, "<a>");
    for (i = 0; i < 300; i++)
        n += (size_t)sprintf(text + n, "</a>");
    assert_int_equal(xml_check(text, n, &r), -1);
    assert_string_equal(r.error, "nested deeper than 256 elements");
    /* 256 levels are fine. */
    n = 0;
    for (i = 0; i < 256; i++)
        n += (size_t)sprintf(text + n, "<a>");
    for (i = 0; i < 256; i++)
        n += (size_t)sprintf(text + n, "</a>");
    assert_int_equal(xml_check(text, n, &r), 0);
    assert_int_equal(r.depth, 256);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_accepts),
        cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_nul),
        cmocka_unit_test(test_depth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
