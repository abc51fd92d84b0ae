// eventhub console: the live tail. Reads /ui/streams/events (Server-Sent Events) with
// the form's pattern and tenant; events are drawn as text (never as HTML). Pause stops
// drawing and keeps what arrives; Resume draws it.
(function () {
  "use strict";
  var root = document.getElementById("tail");
  if (!root) { return; }
  var list = document.getElementById("tail-list");
  var status = document.getElementById("tail-status");
  var toggle = document.getElementById("tail-toggle");
  var clear = document.getElementById("tail-clear");
  var url = root.getAttribute("data-src");
  var max = 500, paused = false, held = [], seen = 0, dropped = 0, es = null;

  function say(text) { status.textContent = text; }

  function row(msg) {
    var ev = msg.event || {};
    var li = document.createElement("li");
    var head = document.createElement("div");
    head.className = "tail-head";
    [["time", ev.time || ""], ["type", ev.type || ""], ["tenant", ev.tenantid || ""], ["id", ev.id || ""]].forEach(function (p) {
      var s = document.createElement("span");
      s.className = "tail-" + p[0];
      s.textContent = p[1];
      head.appendChild(s);
    });
    var body = document.createElement("pre");
    body.textContent = JSON.stringify(ev.data === undefined ? ev : ev.data, null, 2);
    li.appendChild(head);
    li.appendChild(body);
    return li;
  }

  function draw(msg) {
    list.insertBefore(row(msg), list.firstChild);
    while (list.children.length > max) { list.removeChild(list.lastChild); }
  }

  function update() {
    var t = (paused ? "Paused: " + held.length + " waiting. " : "Live. ") + seen + " events";
    if (dropped) { t += ", " + dropped + " dropped by the server (the browser was too slow)"; }
    say(t + ".");
  }

  function open() {
    es = new EventSource(url);
    es.addEventListener("ce", function (e) {
      var msg = JSON.parse(e.data);
      seen++;
      dropped += msg.dropped || 0;
      if (paused) { held.push(msg); if (held.length > max) { held.shift(); } } else { draw(msg); }
      update();
    });
    es.onopen = update;
    es.onerror = function () { say("Disconnected; reconnecting…"); };
  }

  toggle.addEventListener("click", function () {
    paused = !paused;
    toggle.textContent = paused ? "Resume" : "Pause";
    toggle.setAttribute("aria-pressed", paused ? "true" : "false");
    if (!paused) { held.forEach(draw); held = []; }
    update();
  });
  clear.addEventListener("click", function () { list.textContent = ""; held = []; update(); });
  open();
})();
