package planctl

/*
#include <stdlib.h>
#include "planctl.h"
*/
import "C"

import (
	"context"
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
// unless WithWebActions.  Authentication is the server's.
//
// The pages stay live as those of `planctl serve` do: each opens
// /stream?path=PAGE, which the handler answers with Server-Sent Events,
// sending the page's live part again when a change touches it (see
// DB.DataVersion: what other handles commit, an engine's included; a
// change made through this same DB shows with the next commit of
// another).  One goroutine per handler looks for changes four times a
// second while streams are open; each stream waits without calls of its
// own until its page is touched.  A stream needs a ResponseWriter that
// is an http.Flusher, and lasts until its request's context ends: a
// server's WriteTimeout cuts it, and the page then asks for its live part
// every second instead.
func (db *DB) WebHandler(opts ...WebOption) http.Handler {
	var cfg webConfig
	for _, o := range opts {
		o(&cfg)
	}
	live := &webLive{db: db}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		target := r.URL.RequestURI()
		if r.Method == http.MethodGet && strings.HasPrefix(target, "/stream") &&
			(len(target) == 7 || target[7] == '?') {
			db.serveStream(w, r, &cfg, live)
			return
		}
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
		a, err := db.webRespond(r.Context(), &cfg, &webRequest{method: r.Method,
			target: target, host: r.Host, origin: r.Header.Get("Origin"),
			contentType: r.Header.Get("Content-Type"),
			ifNoneMatch: r.Header.Get("If-None-Match"), body: body})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		a.write(w, r.Method == http.MethodHead)
	})
}

// webRequest is what planctl_web_respond reads of a request.
type webRequest struct {
	method, target, host, origin, contentType, ifNoneMatch string
	body                                                   []byte
}

// webAnswer is an answer of planctl_web_respond, copied out of C.
type webAnswer struct {
	status      int
	contentType string
	headers     string // "Name: value\r\n" each
	body        []byte
}

// webRespond answers wr through planctl_web_respond, with the pages
// opening /stream (the handler answers it).
func (db *DB) webRespond(ctx context.Context, cfg *webConfig, wr *webRequest) (*webAnswer, error) {
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
	req.method = str(wr.method)
	req.target = str(wr.target)
	req.host = str(wr.host)
	req.origin = str(wr.origin)
	req.content_type = str(wr.contentType)
	req.if_none_match = str(wr.ifNoneMatch)
	if len(wr.body) > 0 {
		req.body = str(string(wr.body))
		req.body_len = C.size_t(len(wr.body))
	}
	o := C.planctl_web_options{version: C.PLANCTL_WEB_OPTIONS_VERSION,
		allow_actions: boolInt(cfg.actions), csrf: str(cfg.csrf),
		actor: str(cfg.actor), stream: 1}
	var resp C.planctl_web_response
	err := db.do(ctx, func(p *C.planctl) C.int {
		return C.planctl_web_respond(&resp, p, &req, &o)
	})
	defer C.planctl_web_response_clear(&resp)
	if err != nil {
		return nil, err
	}
	a := &webAnswer{status: int(resp.status), headers: C.GoString(resp.headers)}
	if resp.content_type != nil {
		a.contentType = C.GoString(resp.content_type)
	}
	if resp.body != nil {
		a.body = C.GoBytes(unsafePointer(resp.body), C.int(resp.body_len))
	}
	return a, nil
}

// header returns the value of the answer's header name ("" when absent).
func (a *webAnswer) header(name string) string {
	for _, line := range strings.Split(a.headers, "\r\n") {
		if i := strings.IndexByte(line, ':'); i > 0 && strings.EqualFold(line[:i], name) {
			return strings.TrimSpace(line[i+1:])
		}
	}
	return ""
}

// write sends the answer as it is (its body only when !headOnly).
func (a *webAnswer) write(w http.ResponseWriter, headOnly bool) {
	h := w.Header()
	for _, line := range strings.Split(a.headers, "\r\n") {
		if i := strings.IndexByte(line, ':'); i > 0 {
			h.Add(line[:i], strings.TrimSpace(line[i+1:]))
		}
	}
	if a.contentType != "" {
		h.Set("Content-Type", a.contentType)
	}
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(a.status)
	if !headOnly {
		w.Write(a.body)
	}
}
