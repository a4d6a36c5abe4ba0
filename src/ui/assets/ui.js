// telic ui: live updates of an open run page. Served as a separate file
// (the Content-Security-Policy forbids inline script). It only appends
// rows the server rendered and escaped, and sets text with textContent.
"use strict";
(function () {
  var body = document.getElementById("timeline-body");
  var live = document.getElementById("live");
  if (!body || !live) return;
  var url = live.getAttribute("data-live-url");
  var after = parseInt(live.getAttribute("data-after"), 10) || 0;
  var version = live.getAttribute("data-version") || "";
  var busy = false;

  function setText(id, text) {
    var el = document.getElementById(id);
    if (el && el.textContent !== text) el.textContent = text;
  }

  function apply(update) {
    if (update.rows) {
      var template = document.createElement("template");
      template.innerHTML = update.rows;  // server-rendered, every value escaped
      var rows = template.content.querySelectorAll("tr");
      for (var i = 0; i < rows.length; i++) rows[i].classList.add("fresh");
      body.appendChild(template.content);
    }
    after = update.after;
    setText("run-status", update.status);
    setText("run-phase", update.phase);
    setText("run-version", String(update.version));
    setText("event-count", String(update.after));
    var badge = document.getElementById("run-status");
    if (badge) badge.className = "badge " + update.status;
    if (version && String(update.version) !== version) {
      live.textContent = "live · the run moved to version " + update.version + "; reload for the diagram and artifacts";
    }
  }

  function poll() {
    if (busy) return;
    busy = true;
    var request = new XMLHttpRequest();
    request.open("GET", url + "?after=" + after);
    request.responseType = "json";
    request.onload = function () {
      busy = false;
      if (request.status === 200 && request.response) {
        apply(request.response);
        live.classList.add("on");
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

  live.classList.add("on");
  setInterval(poll, 400);
})();
