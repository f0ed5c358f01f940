#include "report/html_page.hpp"

#include <cmath>

#include <fmt/format.h>

#include "report/xml_escape.hpp"

namespace attnbench {
namespace {

constexpr const char* style = R"CSS(
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em auto;max-width:1100px;padding:0 1em;color:#1b1f24;background:#fff}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border:1px solid #d0d7de;padding:.25em .6em;text-align:right}
th{background:#f6f8fa}td.text,th.text{text-align:left}
tr.fail td{background:#ffebe9}tr.flag td{background:#fff8c5}tr.skipped td{color:#6e7781}
dl.env{display:grid;grid-template-columns:max-content auto;gap:.1em 1em;font-size:.9em}dl.env dt{font-weight:600}
figure.chart{margin:1em 0}figure.chart svg{max-width:100%;height:auto;font-size:11px}
.muted{color:#6e7781;font-size:.85em}
)CSS";

// Draws every chart of the data block; written for any browser of the last years, no library.
constexpr const char* script = R"JS(
(function () {
  'use strict';
  var NS = 'http://www.w3.org/2000/svg';
  function el(name, attrs, text) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fmt(v) { return v === null || !isFinite(v) ? 'n/a' : Number(v).toPrecision(4); }
  function finite(v) { return v !== null && v !== undefined && isFinite(v); }
  var palette = ['#0969da', '#bf3989', '#1a7f37', '#9a6700', '#8250df', '#cf222e', '#57606a'];

  function bars(fig, c) {
    var items = c.items.filter(function (d) { return finite(d.value); });
    if (!items.length) return;
    var rowH = 26, left = 190, right = 90, W = 760, H = items.length * rowH + 40;
    var max = 0;
    items.forEach(function (d) { max = Math.max(max, d.value, finite(d.high) ? d.high : 0); });
    if (finite(c.reference)) max = Math.max(max, c.reference);
    max *= 1.05;
    var sx = function (v) { return left + (W - left - right) * v / max; };
    var svg = el('svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': c.title, 'class': 'attnbench-chart'});
    svg.appendChild(el('text', {x: left, y: 14, 'font-weight': 'bold'}, c.title + ' (' + c.unit + ')'));
    items.forEach(function (d, i) {
      var y = 24 + i * rowH;
      svg.appendChild(el('text', {x: left - 6, y: y + 15, 'text-anchor': 'end'}, d.label));
      var bar = el('rect', {x: left, y: y + 3, width: Math.max(1, sx(d.value) - left), height: rowH - 8,
                            fill: d.fail ? '#cf222e' : '#0969da', 'fill-opacity': 0.75});
      bar.appendChild(el('title', {}, d.label + ': ' + fmt(d.value) + (finite(d.low) ? ' [' + fmt(d.low) + '–' + fmt(d.high) + ']' : '')));
      svg.appendChild(bar);
      if (finite(d.low) && finite(d.high)) {
        var cy = y + rowH / 2 - 1;
        svg.appendChild(el('line', {x1: sx(d.low), x2: sx(d.high), y1: cy, y2: cy, stroke: '#1b1f24'}));
        svg.appendChild(el('line', {x1: sx(d.low), x2: sx(d.low), y1: cy - 5, y2: cy + 5, stroke: '#1b1f24'}));
        svg.appendChild(el('line', {x1: sx(d.high), x2: sx(d.high), y1: cy - 5, y2: cy + 5, stroke: '#1b1f24'}));
      }
      svg.appendChild(el('text', {x: sx(Math.max(d.value, finite(d.high) ? d.high : 0)) + 6, y: y + 15}, fmt(d.value) + (d.fail ? ' FAIL' : '')));
    });
    if (finite(c.reference)) {
      svg.appendChild(el('line', {x1: sx(c.reference), x2: sx(c.reference), y1: 20, y2: H - 12, stroke: '#57606a', 'stroke-dasharray': '4 3'}));
    }
    fig.insertBefore(svg, fig.firstChild);
  }

  function lines(fig, c) {
    var W = 760, H = 260, left = 70, right = 50, top = 24, bottom = 40;
    var xs = [], lo = Infinity, hi = -Infinity;
    c.series.forEach(function (s) {
      s.points.forEach(function (p) {
        if (xs.indexOf(p.x) < 0) xs.push(p.x);
        [p.value, p.low, p.high].forEach(function (v) { if (finite(v)) { lo = Math.min(lo, v); hi = Math.max(hi, v); } });
      });
    });
    if (!xs.length || !isFinite(lo)) return;
    var pad = (hi - lo) * 0.1 || Math.abs(hi) * 0.05 || 1;
    lo -= pad; hi += pad;
    var sx = function (i) { return left + (xs.length === 1 ? (W - left - right) / 2 : (W - left - right) * i / (xs.length - 1)); };
    var sy = function (v) { return top + (H - top - bottom) * (hi - v) / (hi - lo); };
    var svg = el('svg', {viewBox: '0 0 ' + W + ' ' + H, role: 'img', 'aria-label': c.title, 'class': 'attnbench-chart'});
    svg.appendChild(el('text', {x: left, y: 14, 'font-weight': 'bold'}, c.title + ' (' + c.unit + ')'));
    for (var t = 0; t <= 4; ++t) {
      var v = lo + (hi - lo) * t / 4;
      svg.appendChild(el('line', {x1: left, x2: W - right, y1: sy(v), y2: sy(v), stroke: '#d0d7de'}));
      svg.appendChild(el('text', {x: left - 6, y: sy(v) + 4, 'text-anchor': 'end'}, fmt(v)));
    }
    xs.forEach(function (x, i) {
      if (xs.length <= 12 || i % Math.ceil(xs.length / 12) === 0)
        svg.appendChild(el('text', {x: sx(i), y: H - bottom + 16, 'text-anchor': 'middle'}, x));
    });
    c.series.forEach(function (s, k) {
      var colour = palette[k % palette.length], path = '';
      s.points.forEach(function (p) {
        var i = xs.indexOf(p.x);
        if (!finite(p.value)) return;
        path += (path ? ' L' : 'M') + sx(i).toFixed(1) + ' ' + sy(p.value).toFixed(1);
        if (finite(p.low) && finite(p.high))
          svg.appendChild(el('line', {x1: sx(i), x2: sx(i), y1: sy(p.low), y2: sy(p.high), stroke: colour, 'stroke-opacity': 0.6}));
        var dot = el('circle', {cx: sx(i), cy: sy(p.value), r: p.flag ? 5 : 3, fill: p.flag ? '#cf222e' : colour});
        dot.appendChild(el('title', {}, s.label + ' @ ' + p.x + ': ' + fmt(p.value)));
        svg.appendChild(dot);
      });
      svg.appendChild(el('path', {d: path, fill: 'none', stroke: colour, 'stroke-width': 1.5}));
      svg.appendChild(el('text', {x: left + 8 + 150 * k, y: H - 6, fill: colour}, s.label));
    });
    fig.insertBefore(svg, fig.firstChild);
  }

  var block = document.getElementById('attnbench-data');
  if (!block) return;
  var data = JSON.parse(block.textContent);
  (data.charts || []).forEach(function (c) {
    var fig = document.getElementById(c.id);
    if (!fig) return;
    if (c.kind === 'bars') bars(fig, c); else if (c.kind === 'lines') lines(fig, c);
    fig.setAttribute('data-drawn', 'true');
  });
})();
)JS";

// JSON inside <script>: "</" would end the element, and U+2028/9 are harmless in JSON but not in
// older script parsers; escaping "<" covers the first everywhere.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string html_escape(const std::string& text) { return xml_escape(text); }

std::string html_number(double v) { return std::isfinite(v) ? fmt::format("{:.4g}", v) : "n/a"; }

std::string html_number_cell(double v, const std::string& css_class) {
  if (!std::isfinite(v)) return fmt::format("<td class=\"{}\" data-value=\"\">n/a</td>", css_class);
  return fmt::format("<td class=\"{}\" data-value=\"{:.17g}\">{}</td>", css_class, v, html_number(v));
}

std::string html_page(const std::string& title, const std::string& body, const nlohmann::ordered_json& chart_data) {
  std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<title>" + html_escape(title) + "</title>\n<style>" + style + "</style>\n</head>\n<body>\n";
  page += body;
  page += "\n<script type=\"application/json\" id=\"attnbench-data\">" + script_safe(chart_data.dump()) + "</script>\n";
  page += std::string("<script>") + script + "</script>\n</body>\n</html>\n";
  return page;
}

}  // namespace attnbench
