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
    assert_int_equal(ask(f, "GET", "/api/v1/nothing", NULL, NULL, NULL), 404);
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
    assert_non_null(
        strstr(f->r.headers, "Location: /instances/site?done=trigger\r\n"));
    tu_expect_text(f->db->db, "web 10.0.0.7",
                   "SELECT actor FROM events WHERE message = 'r\xC3\xA9"
                   "ason one'");
    /* Refused by the state: the library's message, 409. */
    assert_int_equal(ask(f, "POST", "/instances/site/trigger", form,
                         "plan=other&csrf=0123456789abcdef0123456789abcdef",
                         NULL),
                     409);
    assert_non_null(strstr(f->r.body, "is running plan"));
    /* The API: JSON only. */
    assert_int_equal(
        ask(f, "POST", "/api/v1/instances/site/cancel", form, "reason=x", NULL),
        415);
    assert_int_equal(ask(f, "POST", "/api/v1/instances/site/cancel",
                         "application/json", "[1]", NULL),
                     400);
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
    assert_int_equal(planctl_set_actor(f->db->p, NULL), 0);
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
        cmocka_unit_test(test_text_random),
        cmocka_unit_test(test_url_every_byte),
        cmocka_unit_test_setup_teardown(test_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_and_etag, setup, teardown),
        cmocka_unit_test_setup_teardown(test_live_pages, setup, teardown),
        cmocka_unit_test_setup_teardown(test_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_actions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_calls, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
