// pigeon web's page (docs/web.md): every text from the server goes in
// through textContent, never as markup; no inline script, no other origin.
'use strict';
(function () {
  var token = new URLSearchParams(location.search).get('token') || '';
  var next = 0;

  function api(path, params) {
    var q = new URLSearchParams(params || {});
    q.set('token', token);
    return fetch(path + '?' + q.toString(), { credentials: 'omit' })
      .then(function (r) {
        return r.json().then(function (j) {
          if (!r.ok) throw new Error(j.error || r.status);
          return j;
        });
      });
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = String(text);
    return e;
  }
  // A text from the server (a body, a name, a path, a reason): its own
  // direction, isolated (dir=auto and the style's unicode-bidi), so a
  // bidi override in it reorders nothing outside its element.
  function field(tag, cls, text) {
    var e = el(tag, cls ? 'f ' + cls : 'f', text);
    e.dir = 'auto';
    return e;
  }
  function when(ms) {
    if (!ms) return 'never';
    return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
  }
  function ago(ms, now) {
    if (!ms) return 'never';
    var s = Math.max(0, Math.round((now - ms) / 1000));
    if (s < 120) return s + 's ago';
    if (s < 7200) return Math.round(s / 60) + 'm ago';
    return Math.round(s / 3600) + 'h ago';
  }
  function showError(e) {
    var p = document.getElementById('error');
    p.textContent = e ? String(e.message || e) : '';
    p.hidden = !e;
  }
  function row(tbody, cells) {
    var tr = el('tr');
    cells.forEach(function (c) {
      var td = el('td');
      td.appendChild(field('span', null, c));
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
  }
  // Each message's three states, as pigeon status tells them: its
  // delivery, its doorbell (decision 0177) and its acknowledgement.
  function delivery(m) {
    if (m.delivered) return ['delivered', 'delivered ' + when(m.delivered)];
    return ['queued', 'queued'];
  }
  function wake(m) {
    if (!m.woken) return null;
    if (m.heard) return ['woken', 'woken ' + when(m.woken) + ' by ' + m.woken_via];
    return ['unheard', 'rung ' + when(m.woken) + ' by ' + m.woken_via + ', unheard'];
  }
  // The library's names (decision 0254): null where none.
  function ack(m) {
    if (m.acknowledged) return ['acked', 'acknowledged ' + when(m.acknowledged)];
    if (!m.ack_within_ms) return null;
    if (m.delivered && Date.now() > m.delivered + m.ack_within_ms)
      return ['overdue', 'ack overdue since ' + when(m.delivered + m.ack_within_ms)];
    return ['asked', 'ack asked within ' + Math.round(m.ack_within_ms / 1000) + 's'];
  }
  function message(m) {
    var d = el('div', 'msg');
    d.id = 'msg-' + m.id;
    var meta = el('div', 'meta');
    meta.dir = 'ltr';
    meta.appendChild(el('span', 'id', '#' + m.id + ' ' + when(m.created) + ' '));
    meta.appendChild(field('span', 'from', m.from));
    meta.appendChild(el('span', 'arrow', ' \u2192 '));
    meta.appendChild(field('span', 'to', m.to));
    if (m.reply_to) meta.appendChild(el('span', null, ' re #' + m.reply_to));
    if (m.priority !== 'normal') meta.appendChild(el('span', null, ' ' + m.priority));
    [['delivery', delivery(m)], ['wake', wake(m)], ['ack', ack(m)]].forEach(function (s) {
      if (s[1]) meta.appendChild(el('span', s[0] + ' state-' + s[1][0], ' ' + s[1][1]));
    });
    d.appendChild(meta);
    d.appendChild(field('div', 'body', m.body));
    return d;
  }
  function threadBox(id) {
    var box = document.getElementById('thread-' + id);
    if (!box) {
      box = el('div', 'thread');
      box.id = 'thread-' + id;
      box.appendChild(el('div', 'meta', 'thread #' + id));
      box.appendChild(el('div', 'msgs'));
    }
    return box;
  }
  function loadMessages(more) {
    var params = { limit: 50 };
    if (more) params.before = next;
    return api('/api/messages', params).then(function (j) {
      var wrap = document.getElementById('threads');
      if (!more) wrap.textContent = '';
      j.messages.forEach(function (m) {
        var box = threadBox(m.thread);
        if (!box.parentNode) wrap.appendChild(box);
        // newest first within the page: older ones go below
        box.lastChild.appendChild(message(m));
      });
      next = j.next;
      document.getElementById('older').hidden = !next;
    });
  }
  function loadState() {
    return api('/api/state').then(function (j) {
      var tb = document.querySelector('#agents tbody');
      tb.textContent = '';
      j.agents.forEach(function (a) {
        row(tb, [a.name, a.hosts || '-', a.state, ago(a.last_seen, j.now), a.queued, a.leases]);
      });
      tb = document.querySelector('#leases tbody');
      tb.textContent = '';
      j.leases.forEach(function (l) {
        row(tb, [l.holder, l.pattern, l.shared ? 'shared' : 'exclusive', when(l.expires), l.reason]);
      });
      document.getElementById('queued').textContent = j.queued + ' queued';
      document.getElementById('replaced').hidden = !j.replaced;
      document.getElementById('send-section').hidden = !j.allow_send;
    });
  }
  function loadAudit() {
    return api('/api/audit', { limit: 50 }).then(function (j) {
      var tb = document.querySelector('#audit tbody');
      tb.textContent = '';
      j.deliveries.forEach(function (d) {
        row(tb, [d.id, when(d.delivered), d.from, d.to, d.route + (d.host ? ' (' + d.host + ')' : ''), d.body]);
      });
    });
  }
  function refresh() {
    return Promise.all([loadState(), loadMessages(false), loadAudit()])
      .then(function () { showError(null); }, showError);
  }
  function search(ev) {
    ev.preventDefault();
    var q = ev.target.elements.q.value;
    var out = document.getElementById('results');
    out.textContent = '';
    if (!q.trim()) return;
    api('/api/search', { q: q, limit: 50 }).then(function (j) {
      if (!j.messages.length) out.appendChild(el('p', 'dim', 'no messages found'));
      j.messages.forEach(function (m) { out.appendChild(message(m)); });
    }, function (e) { out.appendChild(el('p', 'alert', e.message)); });
  }
  function send(ev) {
    ev.preventDefault();
    var f = ev.target;
    var body = new URLSearchParams();
    body.set('from', f.elements.from.value);
    body.set('to', f.elements.to.value);
    body.set('body', f.elements.body.value);
    var res = document.getElementById('send-result');
    fetch('/api/send?token=' + encodeURIComponent(token), {
      method: 'POST', body: body, credentials: 'omit',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' }
    }).then(function (r) { return r.json(); }).then(function (j) {
      res.textContent = j.error ? j.error : 'sent #' + j.sent.join(', #');
      if (!j.error) f.elements.body.value = '';
    }, function (e) { res.textContent = String(e); });
  }
  function verify() {
    var out = document.getElementById('verified');
    out.textContent = 'verifying';
    api('/api/verify').then(function (j) {
      out.textContent = j.ok ? 'chain intact: ' + j.rows + ' deliveries verified'
        : 'chain broken at #' + j.bad + ': ' + j.error;
    }, function (e) { out.textContent = e.message; });
  }
  // The live updates. The browser reconnects a dropped stream by
  // itself, but gives up on one the server refused (a 503 when its
  // event streams are all taken): then a new one, after a pause, and a
  // refresh for what changed meanwhile (decision 0224).
  function live() {
    var es = new EventSource('/api/events?token=' + encodeURIComponent(token));
    var badge = document.getElementById('live');
    var missed = false;
    es.addEventListener('open', function () {
      badge.textContent = 'live';
      if (missed) refresh();
      missed = false;
    });
    es.addEventListener('change', function () { refresh(); });
    es.addEventListener('replaced', function () {
      document.getElementById('replaced').hidden = false;
    });
    es.addEventListener('error', function () {
      badge.textContent = 'reconnecting';
      missed = true;
      if (es.readyState === EventSource.CLOSED) {
        setTimeout(function () { refresh().then(live); }, 2000);
      }
    });
  }
  document.addEventListener('DOMContentLoaded', function () {
    document.getElementById('search').addEventListener('submit', search);
    document.getElementById('send').addEventListener('submit', send);
    document.getElementById('verify').addEventListener('click', verify);
    document.getElementById('older').addEventListener('click', function () { loadMessages(true); });
    refresh().then(live);
  });
})();
