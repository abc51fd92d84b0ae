// eventhub console: small progressive enhancements. Every page works without them.
(function () {
  "use strict";
  // Anything the Content-Security-Policy blocks is a bug of the console (an inline
  // style or script slipped in): keep a list, which the browser tests read.
  window.hubCSPViolations = [];
  document.addEventListener("securitypolicyviolation", function (e) {
    window.hubCSPViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
  });
  // Forms with data-confirm ask before they submit (purges, bulk actions).
  document.addEventListener("submit", function (e) {
    var f = e.target;
    var msg = f.getAttribute("data-confirm");
    if (msg && !window.confirm(msg)) {
      e.preventDefault();
    }
  });
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-copy]");
    if (b) {
      var src = document.getElementById(b.getAttribute("data-copy"));
      if (src && navigator.clipboard) {
        navigator.clipboard.writeText(src.textContent.trim()).then(function () {
          b.textContent = "Copied";
        });
      }
    }
  });
  // A "select all" box checks every box of its group.
  document.addEventListener("change", function (e) {
    var t = e.target;
    var group = t.getAttribute("data-select-all");
    if (group) {
      document.querySelectorAll('input[type=checkbox][data-group="' + group + '"]').forEach(function (c) {
        c.checked = t.checked;
      });
    }
  });
})();
