// app.js - keeps a planctl page live, without a framework.
//
// The page works without this script; with it:
// - the live region (main#live) is updated in place when the database
//   changes: from the server's stream (/stream?path=..., Server-Sent
//   Events) when it offers one, else by asking for the region again
//   (?part=live, conditional: 304 while nothing changed) every second.
//   When the stream drops, the page falls back to asking.
// - an update keeps what the reader did: which phases are open, where
//   the page and each output are scrolled, an output followed at its end.
// - only the actions that apply now are offered (cancel while a run is
//   active, resume a paused one, ...), as the region says.
// - times are shown in the reader's zone with the zone named; the UTC
//   time stays in the title (on hover).  Running things count up, a
//   step's next try counts down ("next try in 4s").
"use strict";

(function () {
  var main = document.getElementById("live");
  var root = document.documentElement;
  var pollTimer = null;
  var source = null;
  var lastText = null;
  var stopped = false;

  function zoneName(d) {
    try {
      var parts = new Intl.DateTimeFormat(undefined, { timeZoneName: "short" })
        .formatToParts(d);
      for (var i = 0; i < parts.length; i++)
        if (parts[i].type === "timeZoneName") return parts[i].value;
    } catch (e) { /* an old browser: no zone name */ }
    return "";
  }

  function pad(n) { return (n < 10 ? "0" : "") + n; }

  function localTimes(scope) {
    var els = scope.querySelectorAll("time[datetime]");
    for (var i = 0; i < els.length; i++) {
      var t = els[i], d = new Date(t.getAttribute("datetime"));
      if (isNaN(d.getTime())) continue;
      var local = d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" +
        pad(d.getDate()) + " " + pad(d.getHours()) + ":" + pad(d.getMinutes()) +
        ":" + pad(d.getSeconds()) + " " + zoneName(d);
      var utc = t.getAttribute("datetime").replace("T", " ").replace("Z", " UTC");
      if (t.hasAttribute("data-ago")) {
        // An age: how long ago, the time itself on hover.
        t.textContent = human(Date.now() - d.getTime()) + " ago";
        t.title = local + " (" + utc + ")";
      } else if (t.hasAttribute("data-until")) {
        // A time to come (a step's next try): how soon, as `planctl
        // status` says it, the time itself on hover.
        t.textContent = until(d.getTime());
        t.title = local + " (" + utc + ")";
      } else {
        t.textContent = local;
        t.title = utc;
      }
    }
  }

  function human(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + "s";
    var m = Math.floor(s / 60);
    if (m < 60) return m + "m" + (s % 60 ? (s % 60) + "s" : "");
    var h = Math.floor(m / 60);
    if (h < 48) return h + "h" + (m % 60 ? (m % 60) + "m" : "");
    return Math.floor(h / 24) + "d";
  }

  function until(at) {
    var ms = at - Date.now();
    return ms > 0 ? "in " + human(ms + 999) : "now";
  }

  function tick() {
    var soon = document.querySelectorAll("time[data-until]");
    for (var k = 0; k < soon.length; k++) {
      var next = Date.parse(soon[k].getAttribute("datetime"));
      if (!isNaN(next)) soon[k].textContent = until(next);
    }
    var ages = document.querySelectorAll("time[data-ago]");
    for (var j = 0; j < ages.length; j++) {
      var at = Date.parse(ages[j].getAttribute("datetime"));
      if (!isNaN(at)) ages[j].textContent = human(Date.now() - at) + " ago";
    }
    var els = document.querySelectorAll(".elapsed[data-since]");
    for (var i = 0; i < els.length; i++) {
      var since = Date.parse(els[i].getAttribute("data-since"));
      if (!isNaN(since)) els[i].textContent = "running " + human(Date.now() - since);
    }
  }

  // What the reader did, read before an update and put back after it.
  function keep() {
    var state = { open: {}, scroll: {}, bottom: {}, x: window.scrollX, y: window.scrollY };
    var d = main.querySelectorAll("details[id]");
    for (var i = 0; i < d.length; i++) state.open[d[i].id] = d[i].open;
    var o = main.querySelectorAll(".attempt");
    for (var j = 0; j < o.length; j++) {
      var pre = o[j].querySelector("pre.output");
      if (!pre) continue;
      var key = o[j].getAttribute("data-step") + "#" + o[j].getAttribute("data-attempt");
      state.scroll[key] = pre.scrollTop;
      state.bottom[key] = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
    }
    return state;
  }

  function restore(state) {
    var d = main.querySelectorAll("details[id]");
    for (var i = 0; i < d.length; i++)
      if (Object.prototype.hasOwnProperty.call(state.open, d[i].id))
        d[i].open = state.open[d[i].id];
    var o = main.querySelectorAll(".attempt");
    for (var j = 0; j < o.length; j++) {
      var pre = o[j].querySelector("pre.output");
      if (!pre) continue;
      var key = o[j].getAttribute("data-step") + "#" + o[j].getAttribute("data-attempt");
      if (state.bottom[key]) pre.scrollTop = pre.scrollHeight;
      else if (key in state.scroll) pre.scrollTop = state.scroll[key];
    }
    window.scrollTo(state.x, state.y);
  }

  // The forms of the actions stay outside the live region (an update
  // must not take what is being typed); the region says which apply now
  // (div#applicable[data-actions]), and only those are shown.
  function syncActions() {
    var can = main && main.querySelector("#applicable");
    if (!can) return;
    var list = (can.getAttribute("data-actions") || "").split(" ");
    var forms = document.querySelectorAll("#actions form[data-action]");
    for (var i = 0; i < forms.length; i++)
      forms[i].hidden = list.indexOf(forms[i].getAttribute("data-action")) < 0;
  }

  function apply(html) {
    if (html === lastText) return;
    lastText = html;
    var state = keep();
    // The server escaped every value it put in this HTML (src/web).
    main.innerHTML = html;
    restore(state);
    syncActions();
    localTimes(main);
    tick();
    main.setAttribute("data-updates", String(+main.getAttribute("data-updates") + 1));
  }

  function livePath() {
    var q = new URLSearchParams(location.search);
    // What an action said (?done=trigger&run=7&plan=deploy&position=2)
    // is not part of the page's live region.
    ["done", "run", "plan", "position"].forEach(function (k) { q.delete(k); });
    var s = q.toString();
    return location.pathname + (s ? "?" + s : "");
  }

  function poll() {
    root.setAttribute("data-live", "poll");
    var path = livePath();
    var url = path + (path.indexOf("?") < 0 ? "?" : "&") + "part=live";
    function again() { if (!stopped) pollTimer = setTimeout(poll1, 1000); }
    function poll1() {
      fetch(url, { cache: "no-cache", credentials: "same-origin" })
        .then(function (r) {
          if (r.status === 200) return r.text().then(apply);
          return null;
        })
        .catch(function () { /* the server is away: ask again */ })
        .then(again);
    }
    poll1();
  }

  function stream() {
    if (typeof window.EventSource !== "function") { poll(); return; }
    source = new EventSource("/stream?path=" + encodeURIComponent(livePath()));
    source.addEventListener("open", function () { root.setAttribute("data-live", "sse"); });
    source.addEventListener("update", function (e) { apply(e.data); });
    source.addEventListener("error", function () {
      // Dropped (the server restarted, a proxy cut it): ask instead.
      if (source) source.close();
      source = null;
      if (!pollTimer && !stopped) poll();
    });
  }

  function start() {
    stopped = false;
    if (document.body.getAttribute("data-stream") === "1") stream();
    else poll();
  }

  // A page left for another is kept by the browser (back/forward cache)
  // with its connections: its stream would hold one of the few a browser
  // opens to a server.  It stops when left and starts again if shown.
  function stop() {
    stopped = true;
    if (source) source.close();
    source = null;
    if (pollTimer) clearTimeout(pollTimer);
    pollTimer = null;
  }

  localTimes(document);
  tick();
  setInterval(tick, 1000);
  if (!main || !main.hasAttribute("data-live-path")) return;
  window.addEventListener("pagehide", stop);
  window.addEventListener("pageshow", function (e) { if (e.persisted) start(); });
  start();
})();
