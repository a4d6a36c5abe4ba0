// telic ui: live updates of an open run page, keyboard navigation, the
// timeline filter. Served as a separate file (the Content-Security-Policy
// forbids inline script). It only appends rows the server rendered and
// escaped, and sets text with textContent.
"use strict";
(function () {
  // --- keyboard: j / k move between rows, Enter opens, / focuses search ---
  var rows = [];
  var current = -1;

  function collectRows() {
    rows = Array.prototype.slice.call(document.querySelectorAll("table.nav-rows tbody tr"));
    rows = rows.filter(function (row) { return row.offsetParent !== null; });
  }

  function select(index) {
    collectRows();
    if (!rows.length) return;
    index = Math.max(0, Math.min(rows.length - 1, index));
    if (current >= 0 && rows[current]) rows[current].classList.remove("selected");
    current = index;
    var row = rows[current];
    row.classList.add("selected");
    if (!row.hasAttribute("tabindex")) row.setAttribute("tabindex", "-1");
    row.focus({ preventScroll: false });
  }

  function open(row) {
    var href = row.getAttribute("data-href");
    if (!href) {
      var link = row.querySelector("a[href]");
      href = link ? link.getAttribute("href") : null;
    }
    if (href) window.location.assign(href);
  }

  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.tagName === "SELECT");
    if (event.key === "Escape" && typing) { target.blur(); return; }
    if (typing || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "/") {
      var search = document.getElementById("search");
      if (search) { event.preventDefault(); search.focus(); search.select(); }
    } else if (event.key === "j") {
      event.preventDefault(); select(current + 1);
    } else if (event.key === "k") {
      event.preventDefault(); select(current < 0 ? 0 : current - 1);
    } else if (event.key === "Enter" && current >= 0 && rows[current] && document.activeElement === rows[current]) {
      event.preventDefault(); open(rows[current]);
    }
  });

  // --- the timeline filter: only errors and denials ---
  var problems = document.getElementById("only-problems");
  var body = document.getElementById("timeline-body");
  function applyFilter() {
    if (!problems || !body) return;
    body.classList.toggle("only-problems", problems.checked);
    current = -1;
  }
  if (problems) problems.addEventListener("change", applyFilter);

  // --- live updates of a run page ---
  var live = document.getElementById("live");
  if (!body || !live) return;
  var url = live.getAttribute("data-live-url");
  var after = parseInt(live.getAttribute("data-after"), 10) || 0;
  var refused = parseInt(live.getAttribute("data-refused"), 10) || 0;
  var version = live.getAttribute("data-version") || "";
  var ended = live.getAttribute("data-ended") === "true";
  var busy = false;
  var timer = null;

  function setText(id, text) {
    var el = document.getElementById(id);
    if (el && el.textContent !== text) el.textContent = text;
  }

  function stop(reason) {
    if (timer !== null) { clearInterval(timer); timer = null; }
    live.classList.remove("on");
    if (reason) live.textContent = reason;
  }

  function apply(update) {
    if (update.rows) {
      var template = document.createElement("template");
      template.innerHTML = update.rows;  // server-rendered, every value escaped
      var fresh = template.content.querySelectorAll("tr");
      for (var i = 0; i < fresh.length; i++) fresh[i].classList.add("fresh");
      body.appendChild(template.content);
    }
    after = update.after;
    if (typeof update.refused === "number") refused = update.refused;
    setText("run-status", update.status);
    setText("run-phase", update.phase);
    setText("run-version", String(update.version));
    setText("event-count", String(update.after));
    var badge = document.getElementById("run-status");
    if (badge) badge.className = "badge " + update.status;
    if (update.ended) {
      ended = true;
      stop("this run has ended; reload for its outcome");
    } else if (version && String(update.version) !== version) {
      live.textContent = "live \u00b7 the run moved to version " + update.version + "; reload for the path and artifacts";
    }
  }

  function poll() {
    if (busy || ended || document.hidden) return;
    busy = true;
    var request = new XMLHttpRequest();
    request.open("GET", url + "?after=" + after + "&refused=" + refused);
    request.responseType = "json";
    request.onload = function () {
      busy = false;
      if (request.status === 200 && request.response) {
        apply(request.response);
        if (!ended) live.classList.add("on");
      } else {
        live.classList.remove("on");
      }
    };
    request.onerror = function () {
      busy = false;
      live.classList.remove("on");
    };
    request.send();
  }

  function start() {
    if (ended || timer !== null || document.hidden) return;
    live.classList.add("on");
    timer = setInterval(poll, 400);
  }

  // Polling stops while the tab is hidden and resumes when it is shown.
  document.addEventListener("visibilitychange", function () {
    if (document.hidden) {
      stop(null);
    } else {
      start();
      poll();
    }
  });
  start();
})();
