// semgraph console: progressive enhancement only (every page works without it).
// Pan and zoom for the call-graph view: drag, wheel, the zoom buttons and the arrow keys
// (+ and - zoom) move the SVG's viewBox; clicking a node follows its link.
"use strict";
(function () {
  function graph(svg) {
    var base = svg.viewBox.baseVal;
    var home = { x: base.x, y: base.y, w: base.width, h: base.height };
    var box = { x: home.x, y: home.y, w: home.w, h: home.h };
    function apply() { svg.setAttribute("viewBox", box.x + " " + box.y + " " + box.w + " " + box.h); }
    function zoom(f, cx, cy) {
      if (cx === undefined) { cx = box.x + box.w / 2; cy = box.y + box.h / 2; }
      var w = Math.min(home.w * 8, Math.max(home.w / 20, box.w * f));
      var k = w / box.w;
      box.x = cx - (cx - box.x) * k; box.y = cy - (cy - box.y) * k;
      box.w = w; box.h = box.h * k; apply();
    }
    function pan(dx, dy) { box.x += dx; box.y += dy; apply(); }
    var drag = null;
    svg.addEventListener("pointerdown", function (e) {
      if (e.target.closest && e.target.closest("a")) { return; }
      drag = { x: e.clientX, y: e.clientY };
      svg.setPointerCapture(e.pointerId);
    });
    svg.addEventListener("pointermove", function (e) {
      if (!drag) { return; }
      var s = box.w / svg.clientWidth;
      pan((drag.x - e.clientX) * s, (drag.y - e.clientY) * s);
      drag = { x: e.clientX, y: e.clientY };
    });
    svg.addEventListener("pointerup", function () { drag = null; });
    svg.addEventListener("wheel", function (e) {
      e.preventDefault();
      var r = svg.getBoundingClientRect();
      var cx = box.x + (e.clientX - r.left) / r.width * box.w;
      var cy = box.y + (e.clientY - r.top) / r.height * box.h;
      zoom(e.deltaY > 0 ? 1.2 : 1 / 1.2, cx, cy);
    }, { passive: false });
    svg.addEventListener("keydown", function (e) {
      var step = box.w / 10;
      var moves = { ArrowLeft: [-step, 0], ArrowRight: [step, 0], ArrowUp: [0, -step], ArrowDown: [0, step] };
      if (moves[e.key] && e.target === svg) { e.preventDefault(); pan(moves[e.key][0], moves[e.key][1]); }
      if (e.key === "+" || e.key === "=") { zoom(1 / 1.2); }
      if (e.key === "-") { zoom(1.2); }
    });
    document.querySelectorAll("[data-zoom]").forEach(function (b) {
      b.addEventListener("click", function () {
        var what = b.getAttribute("data-zoom");
        if (what === "in") { zoom(1 / 1.2); }
        else if (what === "out") { zoom(1.2); }
        else { box = { x: home.x, y: home.y, w: home.w, h: home.h }; apply(); }
      });
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var svg = document.getElementById("callgraph");
    if (svg) { graph(svg); }
  });
})();
