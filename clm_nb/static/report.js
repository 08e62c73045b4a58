(function () {
  var table = document.getElementById('board');
  if (!table) return;
  var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var q = document.getElementById('q'), coll = document.getElementById('collection'),
      verdict = document.getElementById('verdict'), shown = document.getElementById('shown');
  function key(row, i, numeric) {
    var v = row.cells[i].getAttribute('data-v');
    if (numeric) { return (v === null || v === '') ? NaN : parseFloat(v); }
    return (v === null ? row.cells[i].textContent : v).toLowerCase();
  }
  function sortBy(i, dir) {
    var numeric = heads[i].getAttribute('data-type') === 'num';
    var keyed = rows.map(function (r, k) { return [key(r, i, numeric), k, r]; });
    keyed.sort(function (a, b) {
      var am = numeric && isNaN(a[0]), bm = numeric && isNaN(b[0]);
      if (am || bm) { return am && bm ? a[1] - b[1] : (am ? 1 : -1); }   // missing values last either way
      if (a[0] < b[0]) return -dir;
      if (a[0] > b[0]) return dir;
      return a[1] - b[1];                                                // ties keep the primary ranking's order
    });
    keyed.forEach(function (e) { body.appendChild(e[2]); });
    heads.forEach(function (h) { h.removeAttribute('aria-sort'); });
    heads[i].setAttribute('aria-sort', dir > 0 ? 'ascending' : 'descending');
  }
  heads.forEach(function (h, i) {
    if (!h.querySelector('button')) return;
    // the whole header cell sorts; its button gets the focus, and Enter or Space on it is a click that bubbles here
    h.addEventListener('click', function () {
      var cur = h.getAttribute('aria-sort');
      var first = h.getAttribute('data-first') === 'desc' ? -1 : 1;
      sortBy(i, cur === 'ascending' ? -1 : cur === 'descending' ? 1 : first);
    });
  });
  // the pinned columns (dataset, verdict) stay in view when the table scrolls sideways: the verdict sits right of the
  // dataset column, whose width is only known once the page is laid out
  function pin() {
    var first = table.querySelector('thead th.pin0');
    if (first) table.style.setProperty('--pin1', first.getBoundingClientRect().width + 'px');
  }
  pin();
  window.addEventListener('resize', pin);
  function filter() {
    var text = q.value.trim().toLowerCase(), c = coll.value, v = verdict.value, n = 0;
    rows.forEach(function (r) {
      var rc = r.getAttribute('data-collection');
      var ok = (!text || r.getAttribute('data-search').indexOf(text) >= 0) &&
               (!c || rc === c || rc.indexOf(c + '/') === 0) && (!v || r.getAttribute('data-verdict') === v);
      r.hidden = !ok;
      if (ok) n += 1;
    });
    shown.textContent = n;
  }
  [q, coll, verdict].forEach(function (e) { e.addEventListener('input', filter); });
  filter();
})();
