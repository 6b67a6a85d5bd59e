// payplat dashboard: the little script the server-rendered pages use. Everything works without
// it except live updates, copying and local times. No inline script anywhere (CSP).
(function () {
  "use strict";

  // Timestamps arrive in UTC inside <time datetime>; show them in the viewer's time zone.
  function localize(root) {
    root.querySelectorAll("time[data-local]").forEach(function (el) {
      var d = new Date(el.getAttribute("datetime"));
      if (isNaN(d.getTime())) return;
      el.title = el.getAttribute("datetime");
      el.textContent = d.toLocaleString(undefined, {
        year: "numeric", month: "short", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short"
      });
    });
  }

  // Copy buttons: <button data-copy="id-of-element-with-the-text">.
  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    var ta = document.createElement("textarea");
    ta.value = text;
    ta.setAttribute("readonly", "");
    ta.className = "skip";
    document.body.appendChild(ta);
    ta.select();
    try { document.execCommand("copy"); } finally { document.body.removeChild(ta); }
    return Promise.resolve();
  }
  document.addEventListener("click", function (e) {
    var btn = e.target.closest("button[data-copy]");
    if (!btn) return;
    var src = document.getElementById(btn.getAttribute("data-copy"));
    if (!src) return;
    var label = btn.textContent;
    copyText(src.textContent.trim()).then(function () {
      btn.textContent = "Copied";
      btn.setAttribute("aria-live", "polite");
      setTimeout(function () { btn.textContent = label; }, 1500);
    });
  });

  // Forms that ask before doing something that cannot be undone.
  document.addEventListener("submit", function (e) {
    var msg = e.target.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) e.preventDefault();
  });

  // Live updates: the server pushes what happened (payment, pool, webhook); each region of the
  // page that shows such things (data-live="payment pool") is re-read from the server and
  // swapped in place. Pushes within a moment are handled together.
  var pending = {};
  var timer = null;
  function refresh() {
    timer = null;
    var kinds = Object.keys(pending);
    pending = {};
    var regions = [];
    kinds.forEach(function (k) {
      document.querySelectorAll('[data-live~="' + k + '"]').forEach(function (el) {
        if (el.id && regions.indexOf(el) < 0) regions.push(el);
      });
    });
    if (!regions.length) return;
    fetch(location.href, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (res) {
        if (res.redirected && res.url.indexOf("/dashboard/signin") >= 0) { location.assign(res.url); return null; }
        return res.ok ? res.text() : null;
      })
      .then(function (html) {
        if (!html) return;
        var doc = new DOMParser().parseFromString(html, "text/html");
        regions.forEach(function (el) {
          var fresh = doc.getElementById(el.id);
          if (!fresh) return;
          var node = document.importNode(fresh, true);
          el.replaceWith(node);
          localize(node);
        });
        document.body.setAttribute("data-live-updates", String(1 + Number(document.body.getAttribute("data-live-updates") || 0)));
      })
      .catch(function () { /* the next push tries again */ });
  }
  function queue(kind) {
    pending[kind] = true;
    if (!timer) timer = setTimeout(refresh, 200);
  }

  function connect() {
    var url = document.body.getAttribute("data-events");
    var state = document.getElementById("live-state");
    if (!url || !window.EventSource) return;
    var es = new EventSource(url);
    es.onopen = function () { if (state) { state.dataset.state = "on"; state.textContent = "Live"; } };
    es.onerror = function () { if (state) { state.dataset.state = "off"; state.textContent = "Reconnecting…"; } };
    ["payment", "pool", "webhook"].forEach(function (kind) {
      es.addEventListener(kind, function () { queue(kind); });
    });
    es.addEventListener("signout", function (e) {
      es.close();
      location.assign("/dashboard/signin?reason=" + encodeURIComponent(e.data));
    });
  }

  localize(document);
  connect();
})();
