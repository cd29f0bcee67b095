package planctl

/*
#include <stdlib.h>
#include "planctl.h"
*/
import "C"

import (
	"io"
	"net/http"
	"strconv"
	"strings"
)

type webConfig struct {
	actions bool
	csrf    string
	actor   string
}

// WebOption changes what the web handler allows.
type WebOption func(*webConfig)

// WithWebActions allows the page's and the API's actions (trigger, cancel,
// pause, resume, retry; refused with 403 otherwise).  csrf is the secret
// every form carries and every form POST must return (at least 16
// characters; "" takes no action from a form, only from the JSON API).
func WithWebActions(csrf string) WebOption {
	return func(c *webConfig) { c.actions, c.csrf = true, csrf }
}

// WithWebActor names who acts, on the events of actions ("web" by default).
func WithWebActor(actor string) WebOption { return func(c *webConfig) { c.actor = actor } }

// maxWebBody is the largest request body the handler reads.
const maxWebBody = 1 << 20

// WebHandler returns planctl's web page (instances, one instance, one run,
// the engines) and its JSON API under /api/v1 as an http.Handler that
// answers from this DB.  Its links are absolute: mount it at the root of
// a mux ("/"), beside your own paths (/metrics, /healthz).  Read-only
// unless WithWebActions.  Authentication is the server's.  The pages stay
// live by asking again every second (the /stream of `planctl serve` is
// not offered).
func (db *DB) WebHandler(opts ...WebOption) http.Handler {
	var cfg webConfig
	for _, o := range opts {
		o(&cfg)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body []byte
		if r.Body != nil {
			var err error
			body, err = io.ReadAll(io.LimitReader(r.Body, maxWebBody+1))
			if err != nil {
				http.Error(w, "cannot read the request body", http.StatusBadRequest)
				return
			}
			if len(body) > maxWebBody {
				http.Error(w, "request body over 1 MiB", http.StatusRequestEntityTooLarge)
				return
			}
		}
		strs := []*C.char{}
		str := func(s string) *C.char {
			if s == "" {
				return nil
			}
			c := cstr(s)
			strs = append(strs, c)
			return c
		}
		defer func() {
			for _, s := range strs {
				free(s)
			}
		}()
		req := C.planctl_web_request{version: C.PLANCTL_WEB_REQUEST_VERSION}
		req.method = str(r.Method)
		req.target = str(r.URL.RequestURI())
		req.host = str(r.Host)
		req.origin = str(r.Header.Get("Origin"))
		req.content_type = str(r.Header.Get("Content-Type"))
		req.if_none_match = str(r.Header.Get("If-None-Match"))
		if len(body) > 0 {
			req.body = str(string(body))
			req.body_len = C.size_t(len(body))
		}
		o := C.planctl_web_options{version: C.PLANCTL_WEB_OPTIONS_VERSION,
			allow_actions: boolInt(cfg.actions), csrf: str(cfg.csrf), actor: str(cfg.actor)}
		var resp C.planctl_web_response
		err := db.do(r.Context(), func(p *C.planctl) C.int {
			return C.planctl_web_respond(&resp, p, &req, &o)
		})
		defer C.planctl_web_response_clear(&resp)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		h := w.Header()
		for _, line := range strings.Split(C.GoString(resp.headers), "\r\n") {
			if i := strings.IndexByte(line, ':'); i > 0 {
				h.Add(line[:i], strings.TrimSpace(line[i+1:]))
			}
		}
		if resp.content_type != nil {
			h.Set("Content-Type", C.GoString(resp.content_type))
		}
		var b []byte
		if resp.body != nil {
			b = C.GoBytes(unsafePointer(resp.body), C.int(resp.body_len))
		}
		h.Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(int(resp.status))
		if r.Method != http.MethodHead {
			w.Write(b)
		}
	})
}
