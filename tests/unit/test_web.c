/* test_web.c - the web page as a function from request to response
 * (planctl_web_respond, src/web/): its escaping checked over every byte
 * and many random strings, the target's decoding, and the answers on a
 * real database: pages, the live part, ETag and 304, the API, and the
 * rules on actions (read-only, CSRF, Origin, content types). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "testutil.h"
#include "web/web.h"

/* ---- escaping ---- */

static char *text_of(const char *s)
{
    wb w = WB_INIT;
    size_t n;

    pctl_wb_text(&w, s);
    return pctl_wb_take(&w, &n);
}

/* No character that ends text or an attribute survives raw. */
static void assert_inert(const char *out, const char *in)
{
    if (strpbrk(out, "<>\"'"))
        fail_msg("raw markup in the escape of %s: %s", in, out);
}

static void test_text_every_byte(void **state)
{
    int b;

    (void)state;
    for (b = 1; b < 256; b++) {
        char in[2] = {(char)b, 0}, want[32];
        char *out = text_of(in);

        assert_inert(out, "a byte");
        if (b == '&')
            assert_string_equal(out, "&amp;");
        else if (b == '<')
            assert_string_equal(out, "&lt;");
        else if (b == '>')
            assert_string_equal(out, "&gt;");
        else if (b == '"')
            assert_string_equal(out, "&quot;");
        else if (b == '\'')
            assert_string_equal(out, "&#39;");
        else if (b == '\n' || b == '\t' || (b >= 0x20 && b < 0x7f))
            assert_string_equal(out, in);
        else if (b < 0x20 || b == 0x7f) {
            snprintf(want, sizeof want, "&lt;U+%04X&gt;", (unsigned)b);
            assert_string_equal(out, want);
        } else {
            /* A lone byte above 0x7f is not UTF-8. */
            assert_string_equal(out, "\xEF\xBF\xBD");
        }
        free(out);
    }
}

static void test_text_controls(void **state)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"a\xE2\x80\xAE"
         "b",
         "a&lt;U+202E&gt;b"}, /* RLO */
        {"\xE2\x80\xAA", "&lt;U+202A&gt;"},
        {"\xE2\x81\xA6x\xE2\x81\xA9", "&lt;U+2066&gt;x&lt;U+2069&gt;"},
        {"\xE2\x80\x8E\xE2\x80\x8F", "&lt;U+200E&gt;&lt;U+200F&gt;"},
        {"\xD8\x9C", "&lt;U+061C&gt;"},
        {"caf\xC3\xA9 \xE2\x9C\x94 \xF0\x9F\x98\x80", /* kept as they are */
         "caf\xC3\xA9 \xE2\x9C\x94 \xF0\x9F\x98\x80"},
        {"\xC0\xAF", "\xEF\xBF\xBD\xEF\xBF\xBD"}, /* overlong */
        {"\xED\xA0\x80",
         "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"}, /* surrogate */
        {"\xE2\x82", "\xEF\xBF\xBD\xEF\xBF\xBD"}, /* cut short */
        {"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
        {"\"><img src=x onerror=alert(1)>",
         "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;"},
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *out = text_of(cases[i].in);

        assert_string_equal(out, cases[i].want);
        free(out);
    }
}

/* c as UTF-8 into out (at least 5 bytes). */
static void utf8_put(char *out, uint32_t c)
{
    unsigned char *o = (unsigned char *)out;

    if (c < 0x80) {
        *o++ = (unsigned char)c;
    } else if (c < 0x800) {
        *o++ = (unsigned char)(0xC0 | (c >> 6));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        *o++ = (unsigned char)(0xE0 | (c >> 12));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    } else {
        *o++ = (unsigned char)(0xF0 | (c >> 18));
        *o++ = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
        *o++ = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        *o++ = (unsigned char)(0x80 | (c & 0x3F));
    }
    *o = 0;
}

/* The characters that show nothing are shown as <U+XXXX>, between
 * letters, so that "pay<U+200B>pal" cannot read as "paypal"; visible
 * ones next to them are kept. */
static void test_text_invisible(void **state)
{
    static const uint32_t hidden[] = {
        0x00AD, 0x034F,  0x061C,  0x115F,  0x1160,  0x17B4,  0x17B5,  0x180B,
        0x180E, 0x180F,  0x200B,  0x200C,  0x200D,  0x200E,  0x200F,  0x2028,
        0x2029, 0x202A,  0x202E,  0x2060,  0x2061,  0x2062,  0x2063,  0x2064,
        0x2066, 0x2069,  0x206A,  0x206F,  0x3164,  0xFEFF,  0xFFA0,  0xFFF9,
        0xFFFB, 0x1BCA0, 0x1BCA3, 0x1D173, 0x1D17A, 0xE0001, 0xE0020, 0xE007F,
    };
    static const uint32_t shown[] = {
        0x00A0, 0x00E9, 0x0600, 0x200A, 0x2010, 0x2030,  0x205F,
        0x2070, 0x2714, 0xFE0F, 0xFEFE, 0xFFFC, 0x1F600, 0xE0080,
    };
    char in[16], want[64], c[8];
    size_t i;

    (void)state;
    for (i = 0; i < sizeof hidden / sizeof hidden[0]; i++) {
        char *out;

        utf8_put(c, hidden[i]);
        snprintf(in, sizeof in, "a%sb", c);
        snprintf(want, sizeof want, "a&lt;U+%04X&gt;b", (unsigned)hidden[i]);
        out = text_of(in);
        if (strcmp(out, want))
            fail_msg("U+%04X: escaped as %s, expected %s", (unsigned)hidden[i],
                     out, want);
        free(out);
    }
    for (i = 0; i < sizeof shown / sizeof shown[0]; i++) {
        char *out;

        utf8_put(c, shown[i]);
        snprintf(in, sizeof in, "a%sb", c);
        out = text_of(in);
        if (strcmp(out, in))
            fail_msg("U+%04X: escaped as %s, expected it kept",
                     (unsigned)shown[i], out);
        free(out);
    }
}

/* Random strings of markup characters, controls and UTF-8 pieces: the
 * escape is always inert, and without controls or bad bytes it decodes
 * back to the input. */
static void test_text_random(void **state)
{
    static const char *const pieces[] = {
        "<",
        ">",
        "&",
        "\"",
        "'",
        "a",
        " ",
        "\n",
        "\x01",
        "\x7f",
        "\xE2\x80\xAE",
        "\xC3\xA9",
        "\xF0\x9F\x98\x80",
        "\xFF",
        "&amp;",
        "=",
    };
    uint64_t seed = 24;
    int round;

    (void)state;
    for (round = 0; round < 20000; round++) {
        char in[128] = "", *out;
        int n = (int)(tu_splitmix64(&seed) % 12), k;

        for (k = 0; k < n; k++)
            strcat(in, pieces[tu_splitmix64(&seed) % 16]);
        out = text_of(in);
        assert_inert(out, in);
        if (!strpbrk(in, "\x01\x7f\xff") && !strstr(in, "\xE2\x80\xAE")) {
            /* Undo the five entities: the input comes back. */
            char back[512], *o = back;
            const char *s = out;

            while (*s) {
                if (!strncmp(s, "&amp;", 5))
                    *o++ = '&', s += 5;
                else if (!strncmp(s, "&lt;", 4))
                    *o++ = '<', s += 4;
                else if (!strncmp(s, "&gt;", 4))
                    *o++ = '>', s += 4;
                else if (!strncmp(s, "&quot;", 6))
                    *o++ = '"', s += 6;
                else if (!strncmp(s, "&#39;", 5))
                    *o++ = '\'', s += 5;
                else
                    *o++ = *s++;
            }
            *o = '\0';
            assert_string_equal(back, in);
        }
        free(out);
    }
}

static void test_url_every_byte(void **state)
{
    int b;

    (void)state;
    for (b = 1; b < 256; b++) {
        char in[2] = {(char)b, 0}, *out;
        wb w = WB_INIT;
        size_t n;

        pctl_wb_url(&w, in);
        out = pctl_wb_take(&w, &n);
        if ((b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') ||
            (b >= '0' && b <= '9') || strchr("-._~", b)) {
            assert_string_equal(out, in);
        } else {
            char want[4];

            snprintf(want, sizeof want, "%%%02X", (unsigned)b);
            assert_string_equal(out, want);
        }
        free(out);
    }
}

/* ---- answers on a real database ---- */

static const char DEF[] =
    "{\"name\":\"w\",\"version\":\"1\","
    "\"parameters\":[{\"name\":\"PASS\",\"secret\":true,\"default\":"
    "\"hunter2\"}],"
    "\"tasks\":[{\"name\":\"t\",\"kind\":\"Dummy\"}],"
    "\"plans\":{\"deploy\":{\"phases\":[{\"name\":\"p\",\"steps\":["
    "{\"name\":\"s\",\"tasks\":[\"t\"]}]}]},"
    "\"other\":{\"phases\":[{\"name\":\"q\",\"steps\":["
    "{\"name\":\"s\",\"tasks\":[\"t\"]}]}]}}}";

typedef struct fx {
    tu_db *db;
    planctl_web_response r;
    planctl_web_options o;
} fx;

static int setup(void **state)
{
    fx *f = calloc(1, sizeof *f);
    planctl_web_options o = PLANCTL_WEB_OPTIONS_INIT;

    f->db = tu_db_open("web.db", 0);
    tu_apply(f->db->p, DEF);
    tu_create(f->db->p, "site", "w");
    assert_int_equal(tu_engine_until_idle(f->db->p), 0);
    f->o = o;
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fx *f = *state;

    planctl_web_response_clear(&f->r);
    tu_db_close(f->db);
    free(f);
    return 0;
}

/* Answers method target (and a body of type ctype) into f->r. */
static int ask(fx *f, const char *method, const char *target, const char *ctype,
               const char *body, const char *origin)
{
    planctl_web_request q = PLANCTL_WEB_REQUEST_INIT;

    planctl_web_response_clear(&f->r);
    q.method = method;
    q.target = target;
    q.host = "127.0.0.1:8080";
    q.origin = origin;
    q.content_type = ctype;
    q.body = body;
    q.body_len = body ? strlen(body) : 0;
    assert_int_equal(planctl_web_respond(&f->r, f->db->p, &q, &f->o), 0);
    return f->r.status;
}

static void test_pages(void **state)
{
    fx *f = *state;

    assert_int_equal(ask(f, "GET", "/", NULL, NULL, NULL), 200);
    assert_non_null(strstr(f->r.body, "data-instance=\"site\""));
    assert_non_null(strstr(
        f->r.headers,
        "Content-Security-Policy: default-src 'none'; script-src 'self';"));
    assert_int_equal(ask(f, "GET", "/instances/site", NULL, NULL, NULL), 200);
    assert_null(strstr(f->r.body, "hunter2"));
    assert_non_null(strstr(f->r.body, "(secret)"));
    assert_int_equal(
        ask(f, "GET", "/instances/%73ite/runs/1", NULL, NULL, NULL), 200);
    assert_non_null(strstr(f->r.body, "id=\"attempts\""));
    assert_int_equal(
        ask(f, "GET", "/instances/site/runs/1/timeline.svg", NULL, NULL, NULL),
        200);
    assert_string_equal(f->r.content_type, "image/svg+xml");
    assert_int_equal(
        ask(f, "GET", "/instances/site/runs/99/timeline.svg", NULL, NULL, NULL),
        404);
    /* A status filter: a known one is applied and shown selected, an
     * unknown one is no filter. */
    assert_int_equal(ask(f, "GET", "/?status=NEVER_RUN", NULL, NULL, NULL),
                     200);
    assert_non_null(strstr(f->r.body, "<option selected>NEVER_RUN</option>"));
    assert_non_null(strstr(f->r.body, "id=\"empty\""));
    assert_int_equal(ask(f, "GET", "/?status=COMPLETE&sort=age&order=desc",
                         NULL, NULL, NULL),
                     200);
    assert_non_null(strstr(f->r.body, "data-instance=\"site\""));
    assert_int_equal(ask(f, "GET", "/?status=bogus", NULL, NULL, NULL), 200);
    assert_non_null(strstr(f->r.body, "data-instance=\"site\""));
    assert_int_equal(ask(f, "GET", "/engines", NULL, NULL, NULL), 200);
    assert_non_null(strstr(f->r.body, "id=\"no-engine\""));
    assert_int_equal(ask(f, "GET", "/instances/nope", NULL, NULL, NULL), 404);
    assert_int_equal(ask(f, "GET", "/instances/site/runs/99", NULL, NULL, NULL),
                     404);
    assert_int_equal(ask(f, "GET", "/instances/site/runs/x", NULL, NULL, NULL),
                     404);
    assert_int_equal(ask(f, "GET", "/a/b/c/d/e/f/g/h/i/j", NULL, NULL, NULL),
                     404);
    assert_int_equal(ask(f, "GET", "/instances/a%00b", NULL, NULL, NULL), 400);
    assert_int_equal(ask(f, "GET", "nope", NULL, NULL, NULL), 400);
    assert_int_equal(ask(f, "PUT", "/", NULL, NULL, NULL), 405);
    assert_int_equal(ask(f, "GET", "/assets/app.js", NULL, NULL, NULL), 200);
    assert_string_equal(f->r.content_type, "text/javascript; charset=utf-8");
    assert_int_equal(ask(f, "GET", "/assets/nope.js", NULL, NULL, NULL), 404);
}

static void test_live_and_etag(void **state)
{
    fx *f = *state;
    planctl_web_request q = PLANCTL_WEB_REQUEST_INIT;
    char tag[64], *e;

    assert_int_equal(
        ask(f, "GET", "/instances/site?part=live", NULL, NULL, NULL), 200);
    assert_null(strstr(f->r.body, "<!DOCTYPE"));
    assert_null(strstr(f->r.body, "<main"));
    assert_non_null(strstr(f->r.body, "id=\"tree\""));
    e = strstr(f->r.headers, "ETag: ");
    assert_non_null(e);
    sscanf(e + 6, "%63s", tag);
    /* Nothing changed: 304 without a body. */
    q.target = "/instances/site?part=live";
    q.if_none_match = tag;
    planctl_web_response_clear(&f->r);
    assert_int_equal(planctl_web_respond(&f->r, f->db->p, &q, &f->o), 0);
    assert_int_equal(f->r.status, 304);
    assert_int_equal(f->r.body_len, 0);
    /* A change: a new ETag, 200. */
    assert_int_equal(planctl_run_cancel(NULL, f->db->p, "site", NULL),
                     PLANCTL_ENOTFOUND); /* nothing active: no change */
    {
        int64_t run = 0;

        assert_int_equal(
            planctl_plan_trigger(&run, f->db->p, "site", "other", NULL), 0);
    }
    planctl_web_response_clear(&f->r);
    assert_int_equal(planctl_web_respond(&f->r, f->db->p, &q, &f->o), 0);
    assert_int_equal(f->r.status, 200);
}

/* Live pages: the page a stream asks for, and which pages a change
 * touches (planctl_web_stream_page, planctl_web_changes_*). */
static void test_live_pages(void **state)
{
    static const char *const refused[] = {
        "/instances/site",
        "/stream",
        "/stream?x=1",
        "/stream?path=instances",
        "/stream?path=",
        "/stream?path=%2Fapi%2Fv1%2Finstances",
        "/stream?path=%2Fassets%2Fapp.js",
        "/stream?path=%2Fstream",
        "/stream?path=%2F%3Fpart%3Dlive",
        "/stream?path=%2Finstances%2Fsite%00x",
    };
    fx *f = *state;
    planctl_web_changes *ch = NULL;
    int64_t seq = PLANCTL_WEB_SINCE_NOW, first, run = 0;
    char *page = NULL;
    size_t i;

    assert_int_equal(
        planctl_web_stream_page(&page, "/stream?path=%2Finstances%2Fsite"), 0);
    assert_string_equal(page, "/instances/site");
    planctl_free(page);
    assert_int_equal(
        planctl_web_stream_page(&page, "/stream?x=1&path=%2F%3Fq%3Da+b&y=2"),
        0);
    assert_string_equal(page, "/?q=a b");
    planctl_free(page);
    for (i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        if (planctl_web_stream_page(&page, refused[i]) != PLANCTL_EINVAL)
            fail_msg("taken: %s", refused[i]);
        assert_null(page);
    }
    assert_int_equal(planctl_web_stream_page(NULL, "/stream?path=%2F"),
                     PLANCTL_EINVAL);

    /* The first look touches nothing and moves seq to the last event. */
    assert_int_equal(planctl_web_changes_read(&ch, f->db->p, &seq), 0);
    assert_true(seq > 0);
    assert_int_equal(planctl_web_changes_touch(ch, "/"), 0);
    assert_int_equal(planctl_web_changes_touch(ch, "/instances/site"), 0);
    planctl_web_changes_free(ch);
    first = seq;

    /* A change of "site" touches its pages and the lists, not another
     * instance's page. */
    assert_int_equal(
        planctl_plan_trigger(&run, f->db->p, "site", "other", NULL), 0);
    assert_int_equal(planctl_web_changes_read(&ch, f->db->p, &seq), 0);
    assert_true(seq > first);
    assert_int_equal(planctl_web_changes_touch(ch, "/"), 1);
    assert_int_equal(planctl_web_changes_touch(ch, "/engines"), 1);
    assert_int_equal(planctl_web_changes_touch(ch, "/instances/site"), 1);
    assert_int_equal(planctl_web_changes_touch(ch, "/instances/site/runs/2"),
                     1);
    assert_int_equal(planctl_web_changes_touch(ch, "/instances/si%74e?x=1"), 1);
    assert_int_equal(planctl_web_changes_touch(ch, "/instances/other"), 0);
    assert_int_equal(planctl_web_changes_touch(NULL, "/"), 0);
    assert_int_equal(planctl_web_changes_touch(ch, NULL), 0);
    planctl_web_changes_free(ch);

    /* Nothing new in the log (a change it does not name): every page. */
    assert_int_equal(planctl_web_changes_read(&ch, f->db->p, &seq), 0);
    assert_int_equal(planctl_web_changes_touch(ch, "/instances/other"), 1);
    planctl_web_changes_free(ch);
    planctl_web_changes_free(NULL);

    seq = -2;
    assert_int_equal(planctl_web_changes_read(&ch, f->db->p, &seq),
                     PLANCTL_EINVAL);
    assert_null(ch);
    assert_int_equal(planctl_web_changes_read(&ch, NULL, &seq), PLANCTL_EINVAL);
}

static void test_api(void **state)
{
    fx *f = *state;
    char *text = NULL;

    assert_int_equal(ask(f, "GET", "/api/v1/instances", NULL, NULL, NULL), 200);
    assert_string_equal(f->r.content_type, "application/json");
    assert_int_equal(planctl_instances_json(&text, f->db->p), 0);
    assert_int_equal(strncmp(f->r.body, text, strlen(text)), 0);
    planctl_free(text);
    assert_int_equal(ask(f, "GET", "/api/v1/instances/nope", NULL, NULL, NULL),
                     404);
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_ENOTFOUND\""));
    assert_int_equal(ask(f, "GET", "/api/v1/instances/site/events?limit=x",
                         NULL, NULL, NULL),
                     400);
    /* Named as the API names it: the query's parameter. */
    assert_non_null(strstr(f->r.body, "?limit= must be a whole number from 0 "
                                      "to 100000"));
    assert_int_equal(ask(f, "GET", "/api/v1/instances/site/logs?attempt=-1",
                         NULL, NULL, NULL),
                     400);
    assert_non_null(strstr(f->r.body, "?attempt= must be a whole number"));
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_EINVAL\""));
    assert_int_equal(ask(f, "GET", "/api/v1/nothing", NULL, NULL, NULL), 404);
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_ENOTFOUND\""));
    assert_int_equal(
        ask(f, "GET", "/api/v1/instances/site/nothing", NULL, NULL, NULL), 404);
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_ENOTFOUND\""));
    assert_int_equal(ask(f, "PUT", "/api/v1/instances", NULL, NULL, NULL), 405);
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_EINVAL\""));
    assert_int_equal(ask(f, "GET", "/api/v1/instances/site", NULL, NULL, NULL),
                     200);
    assert_null(strstr(f->r.body, "hunter2"));
}

static void test_actions(void **state)
{
    fx *f = *state;
    const char *form = "application/x-www-form-urlencoded";

    /* Read-only: refused, and the page carries no form token. */
    assert_int_equal(ask(f, "POST", "/api/v1/instances/site/trigger",
                         "application/json", "{\"plan\":\"other\"}", NULL),
                     403);
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_EFORBIDDEN\""));
    f->o.csrf = "0123456789abcdef0123456789abcdef";
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", form,
                         "plan=other&csrf=0123456789abcdef0123456789abcdef",
                         NULL),
                     403);
    f->o.allow_actions = 1;
    f->o.actor = "web 10.0.0.7";
    assert_int_equal(ask(f, "GET", "/instances/site", NULL, NULL, NULL), 200);
    assert_non_null(
        strstr(f->r.body, "value=\"0123456789abcdef0123456789abcdef\""));
    /* Without the token, with a wrong one, from another origin. */
    assert_int_equal(
        ask(f, "POST", "/instances/site/trigger", form, "plan=other", NULL),
        403);
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", form,
                         "plan=other&csrf=0123456789abcdef0123456789abcdeX",
                         NULL),
                     403);
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", form,
                         "plan=other&csrf=0123456789abcdef0123456789abcdef",
                         "http://evil.example"),
                     403);
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", "text/plain",
                         "plan=other&csrf=0123456789abcdef0123456789abcdef",
                         NULL),
                     415);
    assert_int_equal(ask(f, "POST", "/instances/site/explode", form,
                         "csrf=0123456789abcdef0123456789abcdef", NULL),
                     404);
    /* Done, from the same origin: 303 back, the event names the actor. */
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", form,
                         "plan=other&reason=r%C3%A9ason+one&csrf="
                         "0123456789abcdef0123456789abcdef",
                         "http://127.0.0.1:8080"),
                     303);
    /* Back to the instance, naming the run admitted and its plan. */
    assert_non_null(
        strstr(f->r.headers,
               "Location: /instances/site?done=trigger&run=2&plan=other\r\n"));
    assert_int_equal(ask(f, "GET",
                         "/instances/site?done=trigger&run=2&plan=other", NULL,
                         NULL, NULL),
                     200);
    assert_non_null(strstr(f->r.body,
                           "Triggered: <a href=\"/instances/site/runs/2\">run "
                           "2</a> of plan \"other\" admitted."));
    tu_expect_text(f->db->db, "web 10.0.0.7",
                   "SELECT actor FROM events WHERE message = 'r\xC3\xA9"
                   "ason one'");
    /* Refused by the state: the library's message, 409, in the page's
     * words, with a link back to the instance. */
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", form,
                         "plan=other&csrf=0123456789abcdef0123456789abcdef",
                         NULL),
                     409);
    assert_non_null(strstr(f->r.body, "is running plan"));
    assert_non_null(strstr(f->r.body, "cancel it first, or queue the run "
                                      "(tick &quot;queue behind the active "
                                      "run&quot;)"));
    assert_null(strstr(f->r.body, "--queue"));
    assert_non_null(
        strstr(f->r.body, "<a id=\"back\" href=\"/instances/site\">"));
    /* The same refused by the API: in its words, its code prefixed. */
    assert_int_equal(ask(f, "POST", "/api/v1/instances/site/trigger",
                         "application/json", "{\"plan\":\"other\"}", NULL),
                     409);
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_ECONFLICT\""));
    assert_non_null(strstr(f->r.body, "cancel it first, or queue the run (set "
                                      "\\\"queue\\\": true in the body)"));
    assert_null(strstr(f->r.body, "--queue"));
    /* The API: JSON only. */
    assert_int_equal(
        ask(f, "POST", "/api/v1/instances/site/cancel", form, "reason=x", NULL),
        415);
    assert_int_equal(ask(f, "POST", "/api/v1/instances/site/cancel",
                         "application/json", "[1]", NULL),
                     400);
    assert_non_null(strstr(f->r.body, "\"code\":\"PLANCTL_EINVAL\""));
    /* An embedder's handle has an actor of its own: the action is
     * recorded as the web's, and the handle has its own back after. */
    assert_int_equal(planctl_set_actor(f->db->p, "controller"), 0);
    assert_int_equal(ask(f, "POST", "/api/v1/instances/site/cancel",
                         "application/json", "{\"reason\":\"api\"}", NULL),
                     200);
    assert_non_null(strstr(f->r.body, "\"action\":\"cancel\""));
    tu_expect_text(f->db->db, "web 10.0.0.7",
                   "SELECT actor FROM events WHERE entity = 'run' "
                   "ORDER BY seq DESC LIMIT 1");
    {
        int64_t run = 0;

        assert_int_equal(
            planctl_plan_trigger(&run, f->db->p, "site", "other", NULL), 0);
    }
    tu_expect_text(f->db->db, "controller",
                   "SELECT actor FROM events WHERE run_id = "
                   "(SELECT max(id) FROM runs) ORDER BY seq LIMIT 1");
    /* Queued: the answer names the run and its place in the queue, and
     * so does the page the form goes back to. */
    assert_int_equal(ask(f, "POST", "/api/v1/instances/site/trigger",
                         "application/json",
                         "{\"plan\":\"deploy\",\"queue\":true}", NULL),
                     200);
    assert_non_null(strstr(f->r.body, "\"run\":4,"));
    assert_non_null(strstr(f->r.body, "\"queue_position\":1"));
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", form,
                         "plan=other&queue=1&csrf="
                         "0123456789abcdef0123456789abcdef",
                         NULL),
                     303);
    assert_non_null(strstr(f->r.headers, "Location: /instances/site?done="
                                         "trigger&run=5&plan=other&position="
                                         "2\r\n"));
    assert_int_equal(ask(f, "GET",
                         "/instances/site?done=trigger&run=5&plan=other&"
                         "position=2",
                         NULL, NULL, NULL),
                     200);
    assert_non_null(strstr(f->r.body, "run 5</a> of plan \"other\" "
                                      "queued (position 2)."));
    assert_int_equal(planctl_set_actor(f->db->p, NULL), 0);
}

/* Whether the instance page of site offers exactly the actions of
 * want ("trigger cancel"): div#applicable lists them, and the forms of
 * the others are hidden. */
static void assert_offered(fx *f, const char *want)
{
    static const char *const all[] = {"trigger", "cancel", "pause", "resume",
                                      "retry"};
    char tag[128];
    size_t i;

    assert_int_equal(ask(f, "GET", "/instances/site", NULL, NULL, NULL), 200);
    snprintf(tag, sizeof tag,
             "<div id=\"applicable\" hidden data-actions=\"%s\">", want);
    if (!strstr(f->r.body, tag))
        fail_msg("the page does not offer %s: no %s", want, tag);
    for (i = 0; i < sizeof all / sizeof all[0]; i++) {
        const char *form;
        int offered = strstr(want, all[i]) != NULL, hidden;

        snprintf(tag, sizeof tag, "<form method=\"post\" data-action=\"%s\"",
                 all[i]);
        form = strstr(f->r.body, tag);
        assert_non_null(form);
        hidden = !strncmp(form + strlen(tag), " hidden", 7);
        if (hidden == offered)
            fail_msg("form %s is %s, expected it %s (offered: %s)", all[i],
                     hidden ? "hidden" : "shown", offered ? "shown" : "hidden",
                     want);
    }
}

/* Actions are offered where the library would take them. */
static void test_offered_actions(void **state)
{
    fx *f = *state;
    int64_t run = 0;

    f->o.allow_actions = 1;
    f->o.csrf = "0123456789abcdef0123456789abcdef";
    /* Nothing active, the latest run COMPLETE: only a trigger. */
    assert_offered(f, "trigger");
    /* A PENDING run (no engine here): cancel it, not pause or resume. */
    assert_int_equal(
        planctl_plan_trigger(&run, f->db->p, "site", "other", NULL), 0);
    assert_offered(f, "trigger cancel");
    /* Cancelled: retry it. */
    assert_int_equal(planctl_run_cancel(NULL, f->db->p, "site", NULL), 0);
    assert_offered(f, "trigger retry");
    /* A read-only page offers nothing and says so. */
    f->o.allow_actions = 0;
    assert_int_equal(ask(f, "GET", "/instances/site", NULL, NULL, NULL), 200);
    assert_null(strstr(f->r.body, "id=\"applicable\""));
}

static void test_bad_calls(void **state)
{
    fx *f = *state;
    planctl_web_request q = PLANCTL_WEB_REQUEST_INIT;
    planctl_web_options o = PLANCTL_WEB_OPTIONS_INIT;

    assert_int_equal(planctl_web_respond(NULL, f->db->p, &q, NULL),
                     PLANCTL_EINVAL);
    assert_int_equal(planctl_web_respond(&f->r, NULL, &q, NULL),
                     PLANCTL_EINVAL);
    q.version = 99;
    assert_int_equal(planctl_web_respond(&f->r, f->db->p, &q, NULL),
                     PLANCTL_EINVAL);
    q.version = PLANCTL_WEB_REQUEST_VERSION;
    o.version = 99;
    assert_int_equal(planctl_web_respond(&f->r, f->db->p, &q, &o),
                     PLANCTL_EINVAL);
    assert_int_equal(planctl_web_respond(&f->r, f->db->p, &q, NULL), 0);
    assert_int_equal(f->r.status, 200);
    assert_int_equal(planctl_set_actor(f->db->p, ""), PLANCTL_EINVAL);
    assert_int_equal(planctl_set_actor(f->db->p, "a\nb"), PLANCTL_EINVAL);
    assert_int_equal(planctl_set_actor(f->db->p, "ok"), 0);
    assert_int_equal(planctl_set_actor(f->db->p, NULL), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_every_byte),
        cmocka_unit_test(test_text_controls),
        cmocka_unit_test(test_text_invisible),
        cmocka_unit_test(test_text_random),
        cmocka_unit_test(test_url_every_byte),
        cmocka_unit_test_setup_teardown(test_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_and_etag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_offered_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_calls, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
