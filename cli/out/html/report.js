/* The HTML report's script (cli/html/report.js, compiled into wss by
 * cli/html/embed.awk): it reads the data cli/html.c wrote into the page,
 * decodes the packed series into typed arrays, and draws every section.
 * No library and nothing fetched: the page must open from file:// on a
 * machine without network.  Long series are drawn with one min/max pair
 * per pixel column (a spike is never averaged away, and a redraw costs
 * the visible samples, not more); tooltips read the exact values. */
(function () {
	'use strict';

	var DATA = JSON.parse(document.getElementById('wss-data').textContent);
	var COLORS = { data: '#2f6fb3', read: '#3a9a5b', write: '#c0503a', code: '#8a5cc2' };
	var TOP_THREADS = 8;

	/* ---- decoding ---- */

	function bytesOf(b64) {
		var s = atob(b64), n = s.length, u = new Uint8Array(n);
		for (var i = 0; i < n; i++) u[i] = s.charCodeAt(i);
		return u;
	}

	/* Runs of zigzag-coded deltas as LEB128 varints (html.c's pack_*):
	 * counts[k] values each, the deltas restarting from 0 at each run.
	 * Arithmetic instead of bit operators: values go past 2^31 (t_ns). */
	function unpackRuns(b64, counts, total) {
		var u = bytesOf(b64), out = new Float64Array(total), pos = 0, at = 0;
		for (var r = 0; r < counts.length; r++) {
			var prev = 0;
			for (var i = 0; i < counts[r]; i++) {
				var z = 0, mul = 1, b;
				do {
					b = u[pos++];
					z += (b & 127) * mul;
					mul *= 128;
				} while (b & 128);
				prev += z % 2 ? -(z + 1) / 2 : z / 2;
				out[at++] = prev;
			}
		}
		return out;
	}

	function unpack(b64, n) { return unpackRuns(b64, [n], n); }

	/* A profile's series and threads, decoded once, when first shown. */
	function prepare(proc) {
		var p = proc.profile;
		if (p._ready) return p;
		var n = p.n, s = {};
		for (var key in p.series) s[key] = unpack(p.series[key], n);
		p.S = s;
		var counts = p.threads.map(function (t) { return t.count; });
		var total = counts.reduce(function (a, b) { return a + b; }, 0);
		var flat = p.thread_data ? unpackRuns(p.thread_data, counts, total) : new Float64Array(0), at = 0;
		p.threads.forEach(function (t) {
			t.values = flat.subarray(at, at + t.count);
			at += t.count;
		});
		p._ready = true;
		return p;
	}

	/* ---- small helpers ---- */

	function el(tag, attrs, kids) {
		var e = document.createElement(tag);
		for (var k in attrs || {}) {
			if (k === 'text') e.textContent = attrs[k];
			else if (k === 'class') e.className = attrs[k];
			else e.setAttribute(k, attrs[k]);
		}
		(kids || []).forEach(function (c) {
			if (c !== null && c !== undefined) e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
		});
		return e;
	}

	function svg(tag, attrs) {
		var e = document.createElementNS('http://www.w3.org/2000/svg', tag);
		for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
		return e;
	}

	function grouped(v) {
		if (v === null || v === undefined) return '?';
		var neg = v < 0, s = String(Math.abs(Math.round(v)));
		return (neg ? '-' : '') + s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
	}

	function seconds(ns) {
		if (ns === null || ns === undefined || ns < 0) return '?';
		return (ns / 1e9).toFixed(3) + ' s';
	}

	function duration(ns) {
		if (ns === null || ns === undefined) return '?';
		if (ns >= 1e9 && ns % 1e9 === 0) return ns / 1e9 + ' s';
		if (ns >= 1e6 && ns % 1e6 === 0) return ns / 1e6 + ' ms';
		if (ns >= 1e3 && ns % 1e3 === 0) return ns / 1e3 + ' us';
		return ns + ' ns';
	}

	/* pages in tenths -> kB as wss report rounds them. */
	function kb(tenths, ps) { return Math.floor((Math.floor(tenths * ps / 1024) + 5) / 10); }

	function shellWord(w) {
		if (w !== '' && /^[A-Za-z0-9_\-+=.,\/:@%]+$/.test(w)) return w;
		return "'" + w.replace(/'/g, "'\\''") + "'";
	}

	function basename(path) { return path ? path.replace(/.*\//, '') : path; }

	function hash(s) {
		var h = 2166136261;
		for (var i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
		return h >>> 0;
	}

	/* Index of the last t[i] <= x (0 when none). */
	function lowerIndex(t, x) {
		var lo = 0, hi = t.length - 1;
		if (hi < 0 || x <= t[0]) return 0;
		while (lo < hi) {
			var mid = (lo + hi + 1) >> 1;
			if (t[mid] <= x) lo = mid; else hi = mid - 1;
		}
		return lo;
	}

	function nearestIndex(t, x) {
		var i = lowerIndex(t, x);
		if (i + 1 < t.length && Math.abs(t[i + 1] - x) < Math.abs(x - t[i])) i++;
		return i;
	}

	var tip = document.getElementById('tip');
	function showTip(ev, text) {
		tip.textContent = text;
		tip.hidden = false;
		var x = ev.clientX + 14, y = ev.clientY + 14, w = tip.offsetWidth, h = tip.offsetHeight;
		if (x + w > window.innerWidth - 4) x = ev.clientX - w - 14;
		if (y + h > window.innerHeight - 4) y = ev.clientY - h - 14;
		tip.style.left = Math.max(0, x) + 'px';
		tip.style.top = Math.max(0, y) + 'px';
	}
	function hideTip() { tip.hidden = true; }

	/* ---- frames ---- */

	/* A frame as html.c writes it:
	 * [function, file, line, inlined, module, addr, offset, function offset, note],
	 * and [label, frames] tenth on each frame of a run of a runtime's
	 * interpreter frames (python3.X, libjvm.so, node), shown as one. */
	function frameLabel(f) {
		if (f[0]) return f[0];
		if (f[4]) return basename(f[4]) + '+' + f[6];
		return f[5];
	}

	function frameWhere(f) {
		if (f[0] && f[1]) return basename(f[1]) + ':' + f[2];
		if (f[0] && f[7] !== null) return '+0x' + f[7].toString(16) + (f[4] ? ' (' + basename(f[4]) + ')' : '');
		if (f[4]) return basename(f[4]);
		return 'no module';
	}

	function siteFrames(p, site) {
		if (site.frames) return site.frames;
		return p.stacks[String(site.stack)] || [];
	}

	/* frames as the text report shows them: a frame, or a run of a
	 * runtime's frames as one entry { fold: label, frames: [...] }. */
	function foldRuns(frames) {
		var out = [];
		for (var k = 0; k < frames.length;) {
			var f = frames[k];
			if (!f[9]) { out.push({ frame: f }); k++; continue; }
			out.push({ fold: f[9][0], frames: frames.slice(k, k + f[9][1]) });
			k += f[9][1];
		}
		return out;
	}

	function foldText(e) { return '[' + e.fold + ': ' + e.frames.length + ' frame' + (e.frames.length === 1 ? '' : 's') + ']'; }

	/* A stack's list; a folded run opens to its frames. */
	function stackList(frames) {
		var ol = el('ol', { class: 'stack' });
		foldRuns(frames).forEach(function (e) {
			var f = e.frame;
			if (!f) {
				ol.appendChild(el('li', { class: 'wss-frame folded' }, [el('details', {}, [el('summary', { text: foldText(e) }),
					stackList(e.frames.map(function (g) { return g.slice(0, 9); }))])]));
				return;
			}
			var li = el('li', { class: 'wss-frame' + (f[3] ? ' inlined' : ''), title: f[5] + (f[4] ? ' in ' + f[4] : '') }, [
				el('span', { class: 'fn', text: frameLabel(f) }), ' ',
				el('span', { class: 'where', text: '(' + frameWhere(f) + ')' }),
				f[3] ? el('span', { class: 'badge', text: 'inlined' }) : null,
				f[8] ? el('span', { class: 'note', text: ' (' + f[8] + ')' }) : null
			]);
			ol.appendChild(li);
		});
		return ol;
	}

	/* ---- state ---- */

	var state = { proc: -1, view: null, charts: [], pending: false, peak: 0, flame: 'run' };

	function scheduleDraw() {
		if (state.pending) return;
		state.pending = true;
		requestAnimationFrame(function () {
			state.pending = false;
			state.charts.forEach(function (c) { c.draw(); });
		});
	}

	/* ---- the time charts ---- */

	/* A chart of series over the profile's time axis, sharing state.view
	 * (zoom and pan) with every other time chart of the page. */
	function TimeChart(box, opts) {
		this.opts = opts;
		this.t = opts.t;
		this.box = el('div', { class: 'chart' });
		this.canvas = el('canvas', { height: opts.height });
		this.canvas.style.height = opts.height + 'px';
		this.box.appendChild(this.canvas);
		if (opts.overlay) {
			this.overlay = svg('svg', { class: 'overlay', height: opts.height });
			this.box.appendChild(this.overlay);
		}
		box.appendChild(this.box);
		this.hover = -1;
		this.pad = { l: opts.compact ? 46 : 62, r: 8, t: opts.padTop || (opts.compact ? 4 : 14), b: opts.compact ? 14 : 22 };
		var self = this, c = this.canvas, drag = null;
		c.addEventListener('wheel', function (ev) {
			ev.preventDefault();
			var v = state.view, x = self.timeAt(ev), f = ev.deltaY > 0 ? 1.25 : 0.8;
			zoomTo(x - (x - v.lo) * f, x + (v.hi - x) * f);
		}, { passive: false });
		c.addEventListener('mousedown', function (ev) {
			drag = { x: ev.clientX, lo: state.view.lo, hi: state.view.hi };
		});
		window.addEventListener('mouseup', function () { drag = null; });
		c.addEventListener('mousemove', function (ev) {
			if (drag && ev.buttons & 1) {
				var w = self.plotWidth(), dt = (ev.clientX - drag.x) / w * (drag.hi - drag.lo);
				zoomTo(drag.lo - dt, drag.hi - dt);
				hideTip();
				return;
			}
			var i = nearestIndex(self.t, self.timeAt(ev));
			self.hover = i;
			scheduleDraw();
			showTip(ev, opts.describe(i));
		});
		c.addEventListener('mouseleave', function () { self.hover = -1; hideTip(); scheduleDraw(); });
		c.addEventListener('dblclick', function () { zoomTo(-Infinity, Infinity); });
		state.charts.push(this);
	}

	TimeChart.prototype.plotWidth = function () {
		return this.canvas.clientWidth - this.pad.l - this.pad.r;
	};

	TimeChart.prototype.timeAt = function (ev) {
		var r = this.canvas.getBoundingClientRect(), v = state.view;
		return v.lo + (ev.clientX - r.left - this.pad.l) / this.plotWidth() * (v.hi - v.lo);
	};

	/* this.pw: the plot's width, read once per draw (clientWidth forces a
	 * layout, and once per sample it cost 0.7 s a redraw at 100,000). */
	TimeChart.prototype.xOf = function (t) {
		var v = state.view;
		return this.pad.l + (t - v.lo) / (v.hi - v.lo) * this.pw;
	};

	/* The visible samples of each series as one [min, max] per pixel
	 * column: cols[k] = {x, lo, hi} per series. */
	TimeChart.prototype.columns = function (values, i0, i1) {
		var out = [], t = this.t, cur = null;
		for (var i = i0; i <= i1; i++) {
			var x = Math.round(this.xOf(t[i])), y = values[i];
			if (y < 0) continue; /* absent */
			if (cur && cur.x === x) {
				if (y < cur.lo) cur.lo = y;
				if (y > cur.hi) cur.hi = y;
			} else {
				cur = { x: x, lo: y, hi: y, first: y, last: y };
				out.push(cur);
			}
			cur.last = y;
		}
		return out;
	};

	TimeChart.prototype.draw = function () {
		var c = this.canvas, dpr = window.devicePixelRatio || 1, W = c.clientWidth, H = this.opts.height;
		if (!W) return;
		this.pw = W - this.pad.l - this.pad.r;
		if (c.width !== Math.round(W * dpr)) c.width = Math.round(W * dpr);
		c.height = Math.round(H * dpr);
		var g = c.getContext('2d');
		g.setTransform(dpr, 0, 0, dpr, 0, 0);
		g.clearRect(0, 0, W, H);
		var t = this.t, v = state.view, pad = this.pad, ph = H - pad.t - pad.b;
		var i0 = Math.max(0, lowerIndex(t, v.lo) - 1), i1 = Math.min(t.length - 1, lowerIndex(t, v.hi) + 1);
		var series = this.opts.series().filter(function (s) { return s.shown !== false; });
		var ymax = this.opts.ymax ? this.opts.ymax() : 0, cols = [];
		for (var k = 0; k < series.length; k++) {
			cols.push(this.columns(series[k].values, i0, i1));
			if (!this.opts.ymax) cols[k].forEach(function (col) { if (col.hi > ymax) ymax = col.hi; });
		}
		ymax = ymax > 0 ? ymax * 1.05 : 1;
		var yOf = function (y) { return pad.t + ph - y / ymax * ph; };
		/* axes */
		g.strokeStyle = '#d5dbe1';
		g.fillStyle = '#5f6b76';
		g.font = '11px system-ui, sans-serif';
		g.lineWidth = 1;
		g.textAlign = 'right';
		g.textBaseline = 'middle';
		var yt = this.opts.compact ? [0, ymax / 1.05] : [0, ymax / 2.1, ymax / 1.05];
		yt.forEach(function (y) {
			var yy = Math.round(yOf(y)) + 0.5;
			g.beginPath(); g.moveTo(pad.l, yy); g.lineTo(W - pad.r, yy); g.stroke();
			g.fillText(grouped(y), pad.l - 4, yy);
		});
		if (!this.opts.compact) {
			g.textAlign = 'center';
			g.textBaseline = 'top';
			for (var k2 = 0; k2 <= 6; k2++) {
				var tt = v.lo + (v.hi - v.lo) * k2 / 6, xx = this.xOf(tt);
				g.fillText(state.xLabel(tt, v.hi - v.lo), Math.min(Math.max(xx, pad.l + 14), W - 16), H - pad.b + 5);
			}
		}
		/* series: an area under the max envelope for the first (the
		 * working set), a min..max line for every one */
		g.save();
		g.beginPath();
		g.rect(pad.l, 0, W - pad.l - pad.r, H);
		g.clip();
		for (var s = 0; s < series.length; s++) {
			var cs = cols[s], col = series[s].color;
			if (!cs.length) continue;
			if (series[s].fill) {
				g.beginPath();
				g.moveTo(cs[0].x, yOf(0));
				cs.forEach(function (q, j) {
					if (j) g.lineTo(cs[j - 1].x, yOf(q.hi));
					g.lineTo(q.x, yOf(q.hi));
				});
				g.lineTo(cs[cs.length - 1].x, yOf(0));
				g.closePath();
				g.globalAlpha = 0.18;
				g.fillStyle = col;
				g.fill();
				g.globalAlpha = 1;
			}
			g.beginPath();
			g.strokeStyle = col;
			g.lineWidth = 1.3;
			/* Steps: a sample's value holds over its interval, which
			 * ends at its time and starts at the one before's. */
			cs.forEach(function (q, j) {
				if (j === 0) g.moveTo(q.x, yOf(q.first));
				else { g.lineTo(cs[j - 1].x, yOf(q.first)); g.lineTo(q.x, yOf(q.first)); }
				if (q.lo !== q.hi) { g.lineTo(q.x, yOf(q.lo)); g.lineTo(q.x, yOf(q.hi)); }
				g.lineTo(q.x, yOf(q.last));
			});
			g.stroke();
		}
		if (this.hover >= 0) {
			var hx = Math.round(this.xOf(t[this.hover])) + 0.5;
			g.strokeStyle = 'rgba(0,0,0,0.45)';
			g.lineWidth = 1;
			g.beginPath(); g.moveTo(hx, pad.t); g.lineTo(hx, H - pad.b); g.stroke();
		}
		g.restore();
		if (this.opts.afterDraw) this.opts.afterDraw(this, yOf);
	};

	function zoomTo(lo, hi) {
		var t = state.x, tmin = t[0], tmax = t[t.length - 1];
		var full = tmax - tmin || 1, minSpan = Math.min(full, t.length > 1 ? 3 * full / (t.length - 1) : full);
		if (!isFinite(lo) || !isFinite(hi) || hi - lo >= full) { lo = tmin; hi = tmax; }
		if (hi - lo < minSpan) { var mid = (lo + hi) / 2; lo = mid - minSpan / 2; hi = mid + minSpan / 2; }
		if (lo < tmin) { hi += tmin - lo; lo = tmin; }
		if (hi > tmax) { lo -= hi - tmax; hi = tmax; }
		if (tmax === tmin) { lo = tmin - 1; hi = tmax + 1; }
		state.view = { lo: lo, hi: hi };
		scheduleDraw();
	}

	/* ---- sections ---- */

	function sectionBody(id) {
		var b = document.querySelector('#' + id + ' .body');
		b.textContent = '';
		return b;
	}

	/* Tenths of a page as "12,340.5". */
	function groupedTenths(t) { return grouped(Math.floor(t / 10)) + '.' + (t % 10); }

	/* An estimate as the text report prints it: "≈ 10,300.0 ± 7.8 % [9,550.5,
	 * 11,102.5]", the interval rounded outwards. */
	function estimate(st, key, value, tenths) {
		var ci = st[key + '_ci'], scale = tenths ? 10 : 1;
		var fmt = function (v) { return tenths ? groupedTenths(v) : grouped(v); };
		var txt = '≈ ' + fmt(Math.round(value * scale));
		if (!ci) return txt + ' (no interval)';
		if (ci[0] === value && ci[1] === value) return fmt(Math.round(value * scale)) + ' (counted)';
		var half = Math.max(value - ci[0], ci[1] - value);
		return txt + (value > 0 ? ' ± ' + (100 * half / value).toFixed(1) + ' %' : '') + ' [' +
			fmt(Math.floor(ci[0] * scale + 1e-9)) + ', ' + fmt(Math.ceil(ci[1] * scale - 1e-9)) + ']';
	}

	function renderRun(proc) {
		var p = proc.profile, b = sectionBody('run');
		if (p.diagnosis)
			b.appendChild(el('p', { class: 'diagnosis', text: p.diagnosis }));
		if (p.truncated)
			b.appendChild(el('p', { class: 'warn', text: 'profile truncated (no summary): the program did not end normally, or the file was cut' +
				(p.cut_line ? '; its last line (' + p.cut_line + ') was cut short and is ignored' : '') }));
		var rows = [
			['program', p.exe],
			['argv', p.argv.map(shellWord).join(' ')],
			['pid', p.pid + (p.ppid !== null ? ' (parent ' + p.ppid + ')' : '')],
			['backend', p.backend + (p.backend_reason ? ' (' + p.backend_reason + ')' : '')],
			['sees', p.backend_sees],
			['mode', (p.track_mode || '?') + (p.sampled ? ': sampled, 1 page in ' + (p.rate_min < p.rate_max ? p.rate_min + '..' : '') +
				p.rate_max + ' (' + p.sampled_samples + ' of ' + p.n + ' samples); counts are estimates with 95 % intervals' : ': every page counted') +
				(p.lower_bound ? '; lower bounds: coarse blocks left touched pages uncounted' : '')],
			['interval', duration(p.interval_ns)],
			['window', duration(p.window_ns) + ' (' + p.window_intervals + ' interval' + (p.window_intervals === 1 ? '' : 's') + ')'],
			['time base', p.time_base],
			['duration', p.duration_ns !== null ? seconds(p.duration_ns) : p.n ? 'at least ' + seconds(p.S.t_ns[p.n - 1]) + ' (to the last sample)' : 'unknown'],
			['samples', String(p.samples)],
			['kernel', p.kernel],
			['page size', p.page_size + ' bytes'],
			['tool', p.tool],
			['session file', p.config_file],
			['trace', p.trace ? p.trace + (p.trace_records !== null ? ' (' + grouped(p.trace_records) + ' intervals, ' + grouped(p.trace_pages) + ' pages, ' + grouped(p.trace_bytes) + ' bytes)' : '') : null]
		];
		if (p.cost && p.cost.program_ns > 0) {
			// the engine's tick and changes against the program's time or the wall time, whichever is longer (as the budget weighs them)
			var c = p.cost, pr = c.program_ns, ba = c.base_ns || pr;
			rows.push(['overhead', (100 * ((c.faults_ns + c.code_ns) / pr + (c.tick_ns + c.change_ns) / ba)).toFixed(1) + ' % of the program\'s time (faults ' +
				(100 * c.faults_ns / pr).toFixed(1) + ' %, tick ' + (100 * c.tick_ns / ba).toFixed(1) + ' %' +
				(c.change_ns ? ', changes of rate ' + (100 * c.change_ns / ba).toFixed(1) + ' %' : '') +
				(c.code_ns ? ', code ' + (100 * c.code_ns / pr).toFixed(1) + ' %' : '') + ')']);
		}
		var facts = el('table', { class: 'facts' });
		rows.forEach(function (r) {
			if (r[1] !== null && r[1] !== undefined)
				facts.appendChild(el('tr', {}, [el('th', { text: r[0] }), el('td', { class: r[0] === 'argv' || r[0] === 'program' ? 'mono' : '', text: r[1] })]));
		});
		var sum = el('table', { id: 'summary' }, [el('tr', {}, [el('th', { text: 'pages' }), el('th', { class: 'num', text: 'avg' }),
			el('th', { class: 'num', text: 'peak' }), el('th', { class: 'num', text: 'total' }), el('th', { class: 'num', text: 'kB avg/peak/total' })])]);
		['data', 'read', 'write', 'code'].forEach(function (k) {
			var st = p.summary[k];
			if (!st) return;
			var avgT = Math.round(st.avg * 10), ps = p.page_size;
			var name = k === 'data' ? 'Data' : k === 'read' ? 'Read' : k === 'write' ? 'Write' : 'Insn (code)';
			sum.appendChild(el('tr', { 'data-series': k }, [
				el('th', {}, [el('span', { class: 'swatch', style: 'background:' + COLORS[k] }), name]),
				el('td', { class: 'num', text: (p.lower_bound && !p.sampled && k !== 'code' ? 'at least ' : '') + (p.sampled && k !== 'code' ? estimate(st, 'avg', st.avg, true) : st.avg.toFixed(1)) }),
				el('td', { class: 'num', text: p.sampled && k !== 'code' ? estimate(st, 'peak', st.peak, false) : grouped(st.peak) }),
				el('td', { class: 'num', text: st.total === null ? '?' : p.sampled && k !== 'code' ? estimate(st, 'total', st.total, false) : grouped(st.total) }),
				el('td', { class: 'num', text: kb(avgT, ps) + '/' + kb(st.peak * 10, ps) + '/' + (st.total === null ? '?' : kb(st.total * 10, ps)) })
			]));
		});
		var kinds = p.summary.kinds ? Object.keys(p.summary.kinds) : [], byKind = null;
		if (kinds.length) {
			byKind = el('table', { id: 'kinds' }, [el('tr', {}, [el('th', { text: 'data by kind' }), el('th', { class: 'num', text: 'avg' }),
				el('th', { class: 'num', text: 'peak' }), el('th', { class: 'num', text: 'total' }), el('th', { class: 'num', text: 'kB peak' })])]);
			kinds.forEach(function (k) {
				var st = p.summary.kinds[k];
				byKind.appendChild(el('tr', { 'data-kind': k }, [el('th', { text: k }),
					el('td', { class: 'num', text: p.sampled ? estimate(st, 'avg', st.avg, true) : st.avg.toFixed(1) }),
					el('td', { class: 'num', text: p.sampled ? estimate(st, 'peak', st.peak, false) : grouped(st.peak) }),
					el('td', { class: 'num', text: st.total === null ? '?' : p.sampled ? estimate(st, 'total', st.total, false) : grouped(st.total) }),
					el('td', { class: 'num', text: kb(st.peak * 10, p.page_size) })]));
			});
		}
		var left = el('div', {}, [el('h3', { text: 'Working set: avg/peak/total' }), sum, byKind,
			p.summary.from === 'samples' ? el('p', { class: 'note', text: 'computed from the samples; the totals, distinct pages over the run, are only in a summary' }) : null,
			p.sampled ? el('p', { class: 'note', text: '≈: estimated from sampled pages; ±: the larger half of the 95 % interval [lo, hi]' }) : null,
			p.precision_note ? el('p', { class: 'note precision', text: p.precision_note }) : null]);
		b.appendChild(el('div', { class: 'cols' }, [facts, left]));
		if (p.settings.length) {
			var cfg = el('table', { id: 'settings' }, [el('tr', {}, [el('th', { text: 'setting' }), el('th', { text: 'value' }), el('th', { text: 'from' })])]);
			p.settings.forEach(function (s) {
				cfg.appendChild(el('tr', {}, [el('td', { class: 'mono', text: s[0] }), el('td', { class: 'mono', text: JSON.stringify(s[1]) }),
					el('td', { class: 'src-' + s[2], text: s[2] })]));
			});
			var changed = p.settings.filter(function (s) { return s[2] !== 'default'; }).length;
			b.appendChild(el('details', {}, [el('summary', { text: 'Settings (' + p.settings.length + ', ' + changed + ' not default)' }), cfg]));
		}
	}

	function describeSample(p, i) {
		var S = p.S, lines = ['seq ' + (i + 1 <= p.n ? i + 1 : '?') + ' at ' + seconds(S.t_ns[i])];
		['data', 'read', 'write'].forEach(function (k) {
			if (!S[k] || S[k][i] < 0) return;
			var ci = S[k + '_lo'] && S[k + '_lo'][i] >= 0 ? '  [' + grouped(S[k + '_lo'][i]) + ', ' + grouped(S[k + '_hi'][i]) + ']' : '';
			lines.push(k + ': ' + (S.rate && S.rate[i] > 1 ? '≈ ' : '') + grouped(S[k][i]) + ' pages' + ci);
		});
		if (S.code && S.code[i] >= 0) lines.push('code: ' + grouped(S.code[i]) + ' pages');
		if (S.faults[i] >= 0) lines.push('first touches: ' + grouped(S.faults[i]));
		if (S.rate && S.rate[i] > 1) lines.push('sampled: 1 page in ' + S.rate[i]);
		p.peaks.forEach(function (k) { if (k.i === i) lines.push('peak ' + k.number + ' (' + k.series + ')'); });
		return lines.join('\n');
	}

	function renderTimeline(proc) {
		var p = proc.profile, b = sectionBody('timeline'), S = p.S;
		if (!p.n) {
			b.appendChild(el('p', { text: 'No samples.' }));
			return;
		}
		var shown = { data: true, read: !!S.read, write: !!S.write, code: !!S.code };
		var bar = el('div', { class: 'toolbar' });
		['data', 'read', 'write', 'code'].forEach(function (k) {
			if (!S[k]) return;
			var cb = el('input', { type: 'checkbox', 'data-series': k });
			cb.checked = shown[k];
			cb.addEventListener('change', function () { shown[k] = cb.checked; scheduleDraw(); });
			bar.appendChild(el('label', {}, [cb, el('span', { class: 'swatch', style: 'background:' + COLORS[k] }),
				k === 'data' ? 'data (working set)' : k === 'read' ? 'read (touched, not written)' : k === 'write' ? 'written' : 'code (insn)']));
		});
		var reset = el('button', { type: 'button', text: 'Reset zoom' });
		reset.addEventListener('click', function () { zoomTo(-Infinity, Infinity); });
		bar.appendChild(reset);
		bar.appendChild(el('span', { text: 'wheel: zoom, drag: pan, double-click: all; ' + grouped(p.n) + ' samples, ' + p.peaks.length + ' peak' + (p.peaks.length === 1 ? '' : 's') + ' (click one)' }));
		b.appendChild(bar);
		/* Flags closer than their width stack, up to FLAG_ROWS rows. */
		var markers = [], FLAG_ROWS = 4, rows = p.peaks.length > 1 ? FLAG_ROWS : 1;
		var chart = new TimeChart(b, {
			t: state.x, height: 260 + 17 * (rows - 1), overlay: true, padTop: 14 + 17 * (rows - 1),
			series: function () {
				return ['data', 'read', 'write', 'code'].filter(function (k) { return S[k]; }).map(function (k) {
					return { values: S[k], color: COLORS[k], fill: k === 'data', shown: shown[k] };
				});
			},
			describe: function (i) { return describeSample(p, i); },
			afterDraw: function (ch) {
				var W = ch.canvas.clientWidth;
				ch.overlay.setAttribute('width', W);
				ch.overlay.style.width = W + 'px';
				var rowEnd = [];
				markers.forEach(function (m) {
					var x = m.peak.i >= 0 ? ch.xOf(state.x[m.peak.i]) : -1e9, inView = x >= ch.pad.l - 1 && x <= W - ch.pad.r + 1, row = 0;
					while (row < rows - 1 && rowEnd[row] !== undefined && rowEnd[row] > x - 17) row++;
					rowEnd[row] = x;
					m.g.setAttribute('transform', 'translate(' + x.toFixed(1) + ',' + row * 17 + ')');
					m.line.setAttribute('y2', ch.opts.height - ch.pad.b - row * 17);
					m.g.style.display = inView ? '' : 'none';
				});
			}
		});
		/* One marker element per peak record, numbered as wss report
		 * numbers them, class wss-peak (the browser test counts them). */
		p.peaks.forEach(function (k) {
			var g = svg('g', { class: 'wss-peak', 'data-peak': k.number, 'data-seq': k.seq });
			var title = svg('title');
			title.textContent = 'peak ' + k.number + ': seq ' + k.seq + ', ' + k.series + ' ' + grouped(k.value) + ' pages';
			g.appendChild(title);
			var line = svg('line', { x1: 0, x2: 0, y1: 14, y2: 14, stroke: '#d1242f', 'stroke-dasharray': '3 3', 'stroke-width': 1 });
			g.appendChild(line);
			g.appendChild(svg('path', { d: 'M-8,0 L8,0 L8,10 L0,16 L-8,10 Z', fill: '#d1242f' }));
			var tx = svg('text', { x: 0, y: 10, 'text-anchor': 'middle' });
			tx.textContent = String(k.number);
			g.appendChild(tx);
			g.addEventListener('click', function (ev) { ev.stopPropagation(); showPeak(proc, k.number); });
			chart.overlay.appendChild(g);
			markers.push({ g: g, peak: k, line: line });
		});
		b.appendChild(el('div', { id: 'peak-detail' }, [el('p', { class: 'note', text: p.peaks.length ? 'Click a peak marker to see the stacks that first touched its pages.' : 'No peaks in this profile.' })]));
		if (p.peaks.length) showPeak(proc, 1, true);
	}

	function siteBlock(p, site) {
		var frames = siteFrames(p, site);
		return el('div', { class: 'site' }, [
			el('div', { text: grouped(site.pages) + ' page' + (site.pages === 1 ? '' : 's') + ' first touched at' + (site.stack === null ? ' (no stack captured)' : '') + ':' }),
			frames.length ? stackList(frames) : el('p', { class: 'note', text: '(stack ' + site.stack + ' is not in the profile)' })
		]);
	}

	function showPeak(proc, number, quiet) {
		var p = proc.profile, k = p.peaks[number - 1], box = document.getElementById('peak-detail');
		if (!k || !box) return;
		state.peak = number;
		document.querySelectorAll('.wss-peak').forEach(function (g) { g.classList.toggle('selected', +g.getAttribute('data-peak') === number); });
		box.textContent = '';
		var when = k.i >= 0 ? ' at ' + seconds(p.S.t_ns[k.i]) : '';
		box.appendChild(el('h3', { text: 'Peak ' + k.number + ': seq ' + k.seq + when + ', ' + k.series.replace(/^thread:/, 'thread ') + ': ' +
			grouped(k.value) + ' pages, mean ' + k.mean.toFixed(1) + ', threshold ' + k.threshold.toFixed(1) +
			(k.mean > 0 ? ' (' + (k.value / k.mean).toFixed(1) + 'x the mean)' : '') }));
		if (!k.sites.length) box.appendChild(el('p', { class: 'note', text: 'No first-touch sites recorded for this peak (the uffd-wp backend takes no faults).' }));
		k.sites.forEach(function (s) { box.appendChild(siteBlock(p, s)); });
		if (!quiet) {
			state.flame = 'peak:' + number;
			renderFlame(proc);
		}
	}

	/* Threads.  The TOP_THREADS threads with the largest peaks get a small
	 * chart each, on one y scale so that they compare at a glance, and the
	 * others are summed into one more chart; under them a heat strip has a
	 * row per thread, every thread, coloured by its working set per pixel
	 * column.  Small multiples read well for 2 threads but not for 200
	 * (each too small, and 200 charts to scroll); a strip of 200 rows fits
	 * in a screen but shows size only as shade.  Together: the big threads
	 * exactly, and the crowd at a glance, whatever the count. */
	function renderThreads(proc) {
		var p = proc.profile, b = sectionBody('threads'), n = p.n, T = p.threads;
		if (!T.length) {
			b.appendChild(el('p', { text: 'No threads in the samples.' }));
			return;
		}
		var order = T.slice().sort(function (a, c) { return c.data_peak - a.data_peak || a.tid - c.tid; });
		var top = order.slice(0, T.length > TOP_THREADS + 1 ? TOP_THREADS : T.length), rest = order.slice(top.length);
		function full(t) {
			var a = new Float64Array(n);
			a.fill(-1);
			for (var i = 0; i < t.count; i++) a[t.first + i] = t.values[i];
			return a;
		}
		var series = top.map(function (t) { return { t: t, values: full(t), label: 'tid ' + (t.tid || '(unknown)') }; });
		if (rest.length) {
			var sum = new Float64Array(n);
			rest.forEach(function (t) { for (var i = 0; i < t.count; i++) sum[t.first + i] += t.values[i]; });
			series.push({ t: null, values: sum, label: rest.length + ' other threads, summed' });
		}
		/* One y scale for the threads, another for the sum of the rest
		 * (on the threads' scale it would flatten them). */
		var ymax = 0;
		series.forEach(function (s) {
			s.ymax = 0;
			for (var i = 0; i < n; i++) if (s.values[i] > s.ymax) s.ymax = s.values[i];
			if (s.t && s.ymax > ymax) ymax = s.ymax;
		});
		b.appendChild(el('p', { class: 'note', text: T.length + ' thread' + (T.length === 1 ? '' : 's') + '; each chart: the thread\'s share of the working set (data pages), ' +
			(rest.length ? 'the ' + top.length + ' largest by peak and the other ' + rest.length + ' summed, ' : '') + 'one y scale for the threads (0 to ' + grouped(ymax) + ' pages)' + (rest.length ? ', its own for the sum' : '') + '; zoom as on the timeline' }));
		var grid = el('div', { class: 'thread-grid' });
		b.appendChild(grid);
		series.forEach(function (s) {
			var cell = el('div', { class: 'wss-thread-series', 'data-tid': s.t ? s.t.tid : 'others' });
			cell.appendChild(el('div', { class: 'label', text: s.label + (s.t ? ': avg ' + s.t.data_avg.toFixed(1) + ', peak ' + grouped(s.t.data_peak) + ', ' + grouped(s.t.faults) + ' first touches' : '') }));
			grid.appendChild(cell);
			new TimeChart(cell, {
				t: state.x, height: 70, compact: true,
				ymax: function () { return s.t ? ymax : s.ymax; },
				series: function () { return [{ values: s.values, color: COLORS.data, fill: true }]; },
				describe: function (i) {
					return s.label + '\nseq ' + (i + 1) + ' at ' + seconds(p.S.t_ns[i]) + '\n' + (s.values[i] < 0 ? 'not in this sample' : grouped(s.values[i]) + ' pages');
				}
			});
		});
		b.appendChild(el('h3', { text: 'Every thread, one row each (largest peak first)' }));
		new HeatStrip(b, p, order);
	}

	function HeatStrip(box, p, order) {
		var rowH = Math.max(1, Math.min(10, Math.floor(320 / order.length)));
		this.p = p;
		this.order = order;
		this.rowH = rowH;
		this.pad = { l: 62, r: 8 };
		this.height = rowH * order.length;
		this.canvas = el('canvas', { class: 'wss-thread-strip', height: this.height });
		this.canvas.style.height = this.height + 'px';
		this.canvas.style.width = '100%';
		box.appendChild(el('div', { class: 'chart' }, [this.canvas]));
		var self = this;
		this.canvas.addEventListener('mousemove', function (ev) {
			var r = self.canvas.getBoundingClientRect(), row = Math.floor((ev.clientY - r.top) / rowH), t = order[row];
			if (!t) return hideTip();
			var v = state.view, x = v.lo + (ev.clientX - r.left - self.pad.l) / (r.width - self.pad.l - self.pad.r) * (v.hi - v.lo);
			var i = nearestIndex(state.x, x), j = i - t.first;
			showTip(ev, 'tid ' + (t.tid || '(unknown)') + '\nseq ' + (i + 1) + ' at ' + seconds(p.S.t_ns[i]) + '\n' +
				(j >= 0 && j < t.count ? grouped(t.values[j]) + ' pages' : 'not in this sample'));
		});
		this.canvas.addEventListener('mouseleave', hideTip);
		state.charts.push(this);
	}

	HeatStrip.prototype.draw = function () {
		var c = this.canvas, W = c.clientWidth, dpr = window.devicePixelRatio || 1;
		if (!W) return;
		c.width = Math.round(W * dpr);
		c.height = Math.round(this.height * dpr);
		var g = c.getContext('2d'), t = state.x, v = state.view, pw = W - this.pad.l - this.pad.r, self = this;
		g.setTransform(dpr, 0, 0, dpr, 0, 0);
		g.fillStyle = '#f5f7f9';
		g.fillRect(this.pad.l, 0, pw, this.height);
		var max = 0;
		this.order.forEach(function (th) { if (th.data_peak > max) max = th.data_peak; });
		/* One pixel per column and thread, scaled up to the rows: an
		 * image, not a rectangle per cell (200 threads x 1,000 columns). */
		var cols = Math.max(1, Math.floor(pw)), rows = this.order.length, img = new ImageData(cols, rows), px = img.data;
		this.order.forEach(function (th, row) {
			var i0 = Math.max(th.first, lowerIndex(t, v.lo)), i1 = Math.min(th.first + th.count - 1, lowerIndex(t, v.hi) + 1);
			var colMax = new Float64Array(cols).fill(-1);
			for (var i = i0; i <= i1; i++) {
				var x = Math.floor((t[i] - v.lo) / (v.hi - v.lo) * cols);
				if (x < 0 || x >= cols) continue;
				var y = th.values[i - th.first];
				if (y > colMax[x]) colMax[x] = y;
			}
			for (var x2 = 0, o = row * cols * 4; x2 < cols; x2++, o += 4) {
				if (colMax[x2] < 0) continue;
				var f = max ? Math.sqrt(colMax[x2] / max) : 0;
				px[o] = 235 - 188 * f;
				px[o + 1] = 241 - 130 * f;
				px[o + 2] = 247 - 68 * f;
				px[o + 3] = 255;
			}
		});
		var off = document.createElement('canvas');
		off.width = cols;
		off.height = rows;
		off.getContext('2d').putImageData(img, 0, 0);
		g.imageSmoothingEnabled = false;
		g.drawImage(off, this.pad.l, 0, cols, this.height);
		if (this.rowH >= 8) {
			g.fillStyle = '#5f6b76';
			g.font = '10px system-ui, sans-serif';
			g.textAlign = 'right';
			g.textBaseline = 'middle';
			this.order.forEach(function (th, row) { g.fillText(String(th.tid || '?'), self.pad.l - 4, row * self.rowH + self.rowH / 2); });
		}
	};

	/* ---- flame graph ---- */

	/* The sites of the selection: the whole run's (the profile's sites
	 * record), or, for an older profile without one, every peak's
	 * together; or one peak's. */
	function flameSites(p, sel) {
		if (sel.indexOf('alloc:') === 0) {
			var key = sel.slice(6);
			return { sites: (p.alloc_sites || []).map(function (x) {
				return { pages: x[key], frames: p.alloc_stacks[String(x.stack)] || [] };
			}), other: 0 };
		}
		if (sel.indexOf('peak:') === 0) {
			var k = p.peaks[+sel.slice(5) - 1];
			return k ? { sites: k.sites, other: 0 } : { sites: [], other: 0 };
		}
		if (p.sites) return { sites: p.sites, other: p.sites_other || 0 };
		var all = [];
		p.peaks.forEach(function (k) { all = all.concat(k.sites); });
		return { sites: all, other: 0 };
	}

	/* An icicle: the root on top, each site's stack from its outermost
	 * frame (main) down to the touching instruction, widths in pages;
	 * frames of one function at one place in the tree merge. */
	function flameTree(p, sel) {
		var fs = flameSites(p, sel), root = { label: 'all', value: 0, kids: {}, where: {} };
		fs.sites.forEach(function (s) {
			var frames = siteFrames(p, s), node = root;
			root.value += s.pages;
			if (!frames.length) frames = [[null, null, null, 0, null, s.pc || '?', null, null, null]];
			/* A folded run is one box, "[python interpreter]", whatever
			 * its length (the lengths are its places), so that runs of
			 * different depths merge. */
			foldRuns(frames).reverse().forEach(function (e) {
				var f = e.frame, label = f ? frameLabel(f) : '[' + e.fold + ']', key = label + (f && f[3] ? ' [inlined]' : '');
				var kid = node.kids[key] || (node.kids[key] = { label: label, inlined: !!(f && f[3]), value: 0, kids: {}, where: {} });
				kid.value += s.pages;
				kid.where[f ? frameWhere(f) : e.frames.length + ' frame' + (e.frames.length === 1 ? '' : 's')] = true;
				node = kid;
			});
		});
		if (fs.other > 0) {
			root.value += fs.other;
			root.kids['(other sites)'] = { label: '(pages of sites not listed)', value: fs.other, kids: {}, where: {} };
		}
		return root;
	}

	function renderFlame(proc) {
		var p = proc.profile, b = sectionBody('flame');
		var select = el('select', { id: 'flame-select' });
		select.appendChild(el('option', { value: 'run', text: p.sites ? 'the whole run' : 'all peaks together (no sites record in this profile)' }));
		p.peaks.forEach(function (k) { select.appendChild(el('option', { value: 'peak:' + k.number, text: 'peak ' + k.number + ' (seq ' + k.seq + ')' })); });
		if (p.alloc_sites && p.alloc_sites.length)
			[['idle', 'idle memory by allocation site'], ['live', 'live memory by allocation site'], ['ws', 'the working set by allocation site']].forEach(function (o) {
				select.appendChild(el('option', { value: 'alloc:' + o[0], text: o[1] }));
			});
		if (!select.querySelector('option[value="' + state.flame + '"]')) state.flame = 'run';
		select.value = state.flame;
		select.addEventListener('change', function () { state.flame = select.value; renderFlame(proc); });
		var byAlloc = state.flame.indexOf('alloc:') === 0;
		b.appendChild(el('div', { class: 'toolbar' }, [el('label', {}, [byAlloc ? 'Pages: ' : 'First touches of ', select]),
			el('span', { text: (byAlloc ? 'width: pages of the allocations made there' : 'width: pages first touched') + '; top: the outermost frame; click a frame to zoom, the top bar to zoom out; hatched: inlined' })]));
		var root = flameTree(p, state.flame);
		if (!root.value) {
			b.appendChild(el('p', { class: 'note', text: 'No first-touch sites here (none recorded: peaks.enabled = false, or the uffd-wp backend, which takes no faults).' }));
			return;
		}
		var box = el('div', { class: 'flame', id: 'flame-graph' });
		b.appendChild(box);
		drawFlame(box, root, root, []);
	}

	function drawFlame(box, root, focus, path) {
		box.textContent = '';
		var ROW = 20, nodes = [], depth = 0;
		/* ancestors of the focus, full width, then its subtree */
		var chain = path.concat([focus]);
		chain.forEach(function (n, d) { nodes.push({ n: n, x: 0, w: 1, d: d, chain: chain.slice(0, d) }); });
		function walk(n, x, w, d, ch) {
			var kids = Object.keys(n.kids).map(function (k) { return n.kids[k]; }).sort(function (a, c) { return c.value - a.value; });
			var at = x;
			kids.forEach(function (k) {
				var kw = w * k.value / n.value;
				if (kw >= 0.002) nodes.push({ n: k, x: at, w: kw, d: d, chain: ch });
				if (kw >= 0.002) walk(k, at, kw, d + 1, ch.concat([k]));
				at += kw;
			});
		}
		walk(focus, 0, 1, chain.length, chain);
		nodes.forEach(function (q) {
			if (q.d + 1 > depth) depth = q.d + 1;
			var n = q.n, isRoot = n === root;
			var div = el('div', { class: 'wss-flame-node' + (isRoot ? ' root' : '') + (n.inlined ? ' inlined' : ''), text: n.label });
			div.style.left = (q.x * 100) + '%';
			div.style.width = 'calc(' + (q.w * 100) + '% - 1px)';
			div.style.top = (q.d * ROW) + 'px';
			if (!isRoot) {
				var h = hash(n.label);
				div.style.background = 'hsl(' + (18 + h % 32) + ',' + (70 + (h >> 5) % 20) + '%,' + (62 + (h >> 9) % 14) + '%)';
			}
			div.addEventListener('mousemove', function (ev) {
				showTip(ev, n.label + (n.inlined ? ' [inlined]' : '') + '\n' + Object.keys(n.where).join(', ') + '\n' +
					grouped(n.value) + ' pages, ' + (100 * n.value / root.value).toFixed(1) + ' % of ' + grouped(root.value));
			});
			div.addEventListener('mouseleave', hideTip);
			div.addEventListener('click', function () {
				hideTip();
				if (n === focus && q.chain.length) drawFlame(box, root, q.chain[q.chain.length - 1], q.chain.slice(0, -1));
				else if (isRoot || n === focus) drawFlame(box, root, root, []);
				else drawFlame(box, root, n, q.chain);
			});
			box.appendChild(div);
		});
		box.style.height = (depth * ROW + 2) + 'px';
	}

	/* ---- the page trace ---- */

	function renderAnalyses(proc) {
		var p = proc.profile, b = sectionBody('analyses');
		if (!p.trace) {
			b.appendChild(el('p', { class: 'hint' }, ['No page trace in this profile. Record one with ',
				el('code', { text: 'wss run --trace -o prog.jsonl -- PROG [ARGS...]' }),
				' and make the page again to see the heat map, the miss-ratio curves and the replacement policies (docs/analyses.md).']));
			return;
		}
		var a = p.analyses || {};
		b.appendChild(el('p', { class: 'note', text: 'From the page trace ' + p.trace + ': the --json output of wss heatmap, wss mrc and wss simulate with their defaults.' }));
		var row = el('div', { class: 'cols' });
		b.appendChild(row);
		if (a.heatmap && !a.heatmap.error) row.appendChild(heatmapBlock(a.heatmap, p.time_base));
		else row.appendChild(el('p', { class: 'warn', text: (a.heatmap && a.heatmap.error) || 'no heat map' }));
		if (a.mrc && !a.mrc.error) row.appendChild(curveBlock('Miss ratio by memory size (wss mrc)', mrcCurves(a.mrc)));
		else row.appendChild(el('p', { class: 'warn', text: (a.mrc && a.mrc.error) || 'no miss-ratio curve' }));
		if (a.simulate && !a.simulate.error) row.appendChild(curveBlock('Replacement policies (wss simulate)', policyCurves(a.simulate)));
		else row.appendChild(el('p', { class: 'warn', text: (a.simulate && a.simulate.error) || 'no simulation' }));
	}

	/* A cell's colour: hue and lightness by the square root of its share
	 * of the largest cell (small counts stay visible), pale when 0. */
	function heatColour(v, max) {
		var f = max ? Math.sqrt(v / max) : 0;
		return v ? 'hsl(' + (230 - 200 * f) + ',80%,' + (88 - 45 * f) + '%)' : '#f5f7f9';
	}

	/* At most n of the indices 0..count-1, evenly spread, the first and the
	 * last included. */
	function spread(count, n) {
		var out = [];
		if (count <= 0) return out;
		var k = Math.min(count, n);
		for (var i = 0; i < k; i++) {
			var j = k === 1 ? 0 : Math.round(i * (count - 1) / (k - 1));
			if (out[out.length - 1] !== j) out.push(j);
		}
		return out;
	}

	/* The heat map with its axes (the first page or address of a few rows
	 * on the left; the first interval of a few columns, its seq and time,
	 * below) and a key of the colours in page touches. */
	function heatmapBlock(h, timeBase) {
		var tb = h.cells.length ? h.cells[0].length : 0, pb = h.cells.length, cw = Math.max(3, Math.floor(560 / Math.max(1, tb))), ch = Math.max(4, Math.floor(240 / Math.max(1, pb)));
		var L = h.by === 'address' ? 118 : 64, W = tb * cw, H = pb * ch;
		var c = el('canvas', { id: 'heatmap', width: W, height: H });
		c.style.width = W + 'px';
		c.style.height = H + 'px';
		c.style.position = 'absolute';
		c.style.left = L + 'px';
		c.style.top = '0px';
		var g = c.getContext('2d');
		for (var r = 0; r < pb; r++)
			for (var t = 0; t < tb; t++) {
				g.fillStyle = heatColour(h.cells[pb - 1 - r][t], h.max);
				g.fillRect(t * cw, r * ch, cw, ch);
			}
		c.addEventListener('mousemove', function (ev) {
			var rc = c.getBoundingClientRect(), t2 = Math.floor((ev.clientX - rc.left) / cw), r2 = pb - 1 - Math.floor((ev.clientY - rc.top) / ch);
			var tbin = h.time_bins[t2], pbin = h.page_bins[r2];
			if (!tbin || !pbin) return hideTip();
			showTip(ev, grouped(h.cells[r2][t2]) + ' page touches\nintervals ' + tbin.seq_first + '..' + tbin.seq_last + ' (' + seconds(tbin.t_ns_first) + '..' + seconds(tbin.t_ns_last) + ')\npages ' +
				(h.by === 'index' ? '#' : '') + pbin.first + '..' + pbin.last);
		});
		c.addEventListener('mouseleave', hideTip);
		var box = el('div', { class: 'heat' }, [c]);
		box.style.width = (L + W + 40) + 'px';
		box.style.height = (H + 38) + 'px';
		/* y: a row's first page, at its middle; the top row's at its top. */
		spread(pb, 6).forEach(function (b) {
			var pbin = h.page_bins[b];
			if (!pbin) return;
			var y = el('div', { class: 'wss-heat-y', text: (h.by === 'index' ? '#' : '') + pbin.first });
			y.style.top = ((pb - 1 - b) * ch + ch / 2 - 7) + 'px';
			y.style.width = (L - 6) + 'px';
			box.appendChild(y);
		});
		/* x: a column's first interval, at its left edge (the first and a few
		 * more). */
		var xs = spread(tb, 5);
		xs.forEach(function (t, i) {
			var tbin = h.time_bins[t];
			if (!tbin) return;
			var x = el('div', { class: 'wss-heat-x' }, [el('span', { text: 'seq ' + tbin.seq_first }), timeBase === 'manual' ? null : el('span', { text: seconds(tbin.t_ns_first) })]);
			x.style.left = (L + t * cw) + 'px';
			x.style.top = (H + 3) + 'px';
			/* the last column's, when it is not the first: its last
			 * interval, right-aligned to the map's right edge */
			if (i && i === xs.length - 1) {
				x.firstChild.textContent = 'seq ' + tbin.seq_last;
				if (x.childNodes[1]) x.childNodes[1].textContent = seconds(tbin.t_ns_last);
				x.style.left = (L + W) + 'px';
				x.classList.add('last');
			}
			box.appendChild(x);
		});
		var yt = el('div', { class: 'wss-heat-title', text: h.by === 'index' ? 'page #' : 'address' });
		yt.style.width = (L - 6) + 'px';
		box.appendChild(yt);
		return el('div', {}, [el('h3', { text: 'Heat map (wss heatmap): pages by ' + h.by + ' up, time right' }), box, heatKey(h.max),
			el('p', { class: 'note', text: grouped(h.pages) + ' distinct pages, ' + grouped(h.intervals) + ' intervals; a cell: first touches of its pages in its intervals (max ' + grouped(h.max) + ')' })]);
	}

	/* The colours' key: a swatch for 0, and for 1, a sixteenth, a quarter,
	 * nine sixteenths and all of the largest cell (even steps of the
	 * square root that sets the colour). */
	function heatKey(max) {
		var key = el('div', { class: 'toolbar wss-heat-key' }, [el('span', { text: 'page touches in a cell:' })]);
		var vals = [0];
		[1, max / 16, max / 4, 9 * max / 16, max].forEach(function (v) {
			v = Math.max(1, Math.round(v));
			if (v <= max && vals.indexOf(v) < 0) vals.push(v);
		});
		vals.forEach(function (v) {
			key.appendChild(el('span', { 'data-touches': v }, [el('span', { class: 'swatch', style: 'background:' + heatColour(v, max) + ';border:1px solid #d5dbe1' }), grouped(v)]));
		});
		return key;
	}

	function mrcCurves(m) {
		var lines = [{ name: 'LRU', color: '#2f6fb3', pts: m.curve.map(function (q) { return [q.pages, q.lru_miss_ratio]; }) }];
		if (m.curve.length && m.curve[0].opt_miss_ratio !== undefined)
			lines.push({ name: 'OPT', color: '#3a9a5b', pts: m.curve.map(function (q) { return [q.pages, q.opt_miss_ratio]; }) });
		return lines;
	}

	function policyCurves(s) {
		var by = {}, order = [], palette = ['#2f6fb3', '#c0503a', '#3a9a5b', '#7a3fb0', '#b08a1c', '#555'];
		s.results.forEach(function (r) {
			if (!by[r.policy]) { by[r.policy] = []; order.push(r.policy); }
			by[r.policy].push([r.frames, 1 - r.hit_ratio]);
		});
		return order.map(function (name, k) { return { name: name.toUpperCase(), color: palette[k % palette.length], pts: by[name] }; });
	}

	/* Miss ratio (0..1) against pages on a log2 axis, one line each. */
	function curveBlock(title, lines) {
		var W = 380, H = 240, L = 44, R = 10, T = 10, B = 34, xs = [];
		lines.forEach(function (l) { l.pts.forEach(function (q) { if (q[0] > 0) xs.push(q[0]); }); });
		var x0 = Math.log2(Math.min.apply(null, xs.length ? xs : [1])), x1 = Math.log2(Math.max.apply(null, xs.length ? xs : [2]));
		if (x1 <= x0) x1 = x0 + 1;
		var X = function (v) { return L + (Math.log2(Math.max(v, 1)) - x0) / (x1 - x0) * (W - L - R); };
		var Y = function (r) { return T + (1 - r) * (H - T - B); };
		var s = svg('svg', { width: W, height: H, class: 'curve' });
		[0, 0.25, 0.5, 0.75, 1].forEach(function (r) {
			s.appendChild(svg('line', { x1: L, x2: W - R, y1: Y(r), y2: Y(r), stroke: '#d5dbe1' }));
			var tx = svg('text', { x: L - 4, y: Y(r) + 4, 'text-anchor': 'end', 'font-size': 10, fill: '#5f6b76' });
			tx.textContent = (r * 100) + '%';
			s.appendChild(tx);
		});
		for (var e = Math.ceil(x0); e <= Math.floor(x1); e += Math.max(1, Math.ceil((x1 - x0) / 6))) {
			var tx2 = svg('text', { x: X(Math.pow(2, e)), y: H - B + 14, 'text-anchor': 'middle', 'font-size': 10, fill: '#5f6b76' });
			tx2.textContent = grouped(Math.pow(2, e));
			s.appendChild(tx2);
		}
		var xl = svg('text', { x: (L + W - R) / 2, y: H - 4, 'text-anchor': 'middle', 'font-size': 11, fill: '#5f6b76' });
		xl.textContent = 'memory (pages, log scale)';
		s.appendChild(xl);
		var legend = el('div', { class: 'toolbar' });
		lines.forEach(function (l) {
			var d = l.pts.map(function (q, i) { return (i ? 'L' : 'M') + X(q[0]).toFixed(1) + ',' + Y(q[1]).toFixed(1); }).join('');
			s.appendChild(svg('path', { d: d, fill: 'none', stroke: l.color, 'stroke-width': 1.6 }));
			l.pts.forEach(function (q) {
				var dot = svg('circle', { cx: X(q[0]), cy: Y(q[1]), r: 2.5, fill: l.color });
				var tt = svg('title');
				tt.textContent = l.name + ': ' + grouped(q[0]) + ' pages, miss ratio ' + (100 * q[1]).toFixed(2) + ' %';
				dot.appendChild(tt);
				s.appendChild(dot);
			});
			legend.appendChild(el('span', {}, [el('span', { class: 'swatch', style: 'background:' + l.color }), l.name]));
		});
		return el('div', {}, [el('h3', { text: title }), s, legend]);
	}

	/* ---- allocation sites ---- */

	/* A figure: the count, or an estimate with its interval. */
	function allocFigure(v, ci) {
		if (!ci || ci[1] - ci[0] <= 1) return grouped(v);
		return '≈ ' + grouped(v) + ' [' + grouped(ci[0]) + ', ' + grouped(ci[1]) + ']';
	}

	/* Each site a row, sortable by any column (a click on its header;
	 * again, the other way). */
	function renderAlloc(proc) {
		var p = proc.profile, b = sectionBody('alloc');
		if (!p.alloc_sites || !p.alloc_sites.length) {
			b.appendChild(el('p', { class: 'note', text: 'No allocation sites in this profile (track.alloc_sites = false, or nothing was allocated).' }));
			return;
		}
		var m = p.alloc_meta;
		b.appendChild(el('p', { class: 'note', text: 'Pages by the call stack that allocated them: live at the end (and at the peak), the working set on average, idle (untouched for the last ' + m.idle_after + ' intervals). Allocations are sampled by their bytes (one sample per ' + grouped(m.mean_bytes) + ' bytes allocated on average, at the end), so figures with an interval are estimates; a page counts as touched when anything on it was.' }));
		var cols = [['site', 'site'], ['live', 'live'], ['peak', 'peak'], ['ws', 'working set'], ['idle', 'idle'], ['allocs', 'allocations']];
		var sort = state.allocSort || { key: 'live', desc: true };
		var rows = p.alloc_sites.slice().sort(function (a, c) {
			var x = sort.key === 'site' ? allocLabel(p, a) : a[sort.key], y = sort.key === 'site' ? allocLabel(p, c) : c[sort.key];
			var r = x < y ? -1 : x > y ? 1 : 0;
			return sort.desc ? -r : r;
		});
		var head = el('tr', {}, cols.map(function (c) {
			var th = el('th', { class: (c[0] === 'site' ? '' : 'num') + ' sortable', 'data-sort': c[0], text: c[1] + (sort.key === c[0] ? (sort.desc ? ' ▾' : ' ▴') : '') });
			th.addEventListener('click', function () {
				state.allocSort = { key: c[0], desc: sort.key === c[0] ? !sort.desc : c[0] !== 'site' };
				renderAlloc(proc);
			});
			return th;
		}));
		var tbl = el('table', { id: 'alloc-sites' }, [head]);
		rows.forEach(function (x) {
			var frames = p.alloc_stacks[String(x.stack)], site;
			if (!frames || !frames.length) site = el('span', { class: 'note', text: '(no stack)' });
			else site = el('details', {}, [el('summary', { text: allocLabel(p, x) }), stackList(frames)]);
			tbl.appendChild(el('tr', { class: 'wss-alloc' }, [
				el('td', {}, [site]),
				el('td', { class: 'num', text: allocFigure(x.live, x.live_ci) }),
				el('td', { class: 'num', text: grouped(x.peak) }),
				el('td', { class: 'num', text: allocFigure(x.ws, x.ws_ci) }),
				el('td', { class: 'num', text: allocFigure(x.idle, x.idle_ci) }),
				el('td', { class: 'num', text: grouped(x.allocs) + (x.sampled < x.allocs ? ' (est.)' : '') })
			]));
		});
		b.appendChild(tbl);
	}

	function allocLabel(p, x) {
		var frames = p.alloc_stacks[String(x.stack)];
		return frames && frames.length ? frameLabel(frames[0]) + ' (' + frameWhere(frames[0]) + ')' : '(no stack)';
	}

	/* ---- hot pages ---- */

	function renderHot(proc) {
		var p = proc.profile, b = sectionBody('hot');
		if (!p.hot.length) {
			b.appendChild(el('p', { class: 'note', text: 'No hot pages in this profile (they are in the summary, with report.hot_pages > 0).' }));
			return;
		}
		if (p.sampled) b.appendChild(el('p', { class: 'note', text: 'A sampled run: these are the hottest of the sampled pages.' }));
		var tbl = el('table', { id: 'hot-pages' }, [el('tr', {}, ['page', 'intervals', 'memory', 'first touched at'].map(function (h, i) {
			return el('th', { class: i === 1 ? 'num' : '', text: h });
		}))]);
		var gone = 0;
		p.hot.forEach(function (h) {
			var frames = h.stack !== null ? p.stacks[String(h.stack)] : null, site;
			if (h.stack === null) site = el('span', { text: '-' });
			else if (!frames || !frames.length) site = el('span', { class: 'note', text: '(stack ' + h.stack + ' is not in the profile)' });
			else site = el('details', {}, [el('summary', { text: frameLabel(frames[0]) + ' (' + frameWhere(frames[0]) + ')' }), stackList(frames)]);
			if (h.gone !== null) gone++;
			tbl.appendChild(el('tr', { class: 'wss-hot' + (h.gone !== null ? ' gone' : '') }, [
				el('td', { class: 'mono addr', text: h.addr }),
				el('td', { class: 'num', text: grouped(h.intervals) }),
				el('td', { class: 'mono', text: h.mapping }),
				el('td', {}, [site, h.gone !== null ? el('span', { class: 'gone-mark', text: ' left tracking in interval ' + h.gone }) : null])
			]));
		});
		b.appendChild(el('p', { class: 'note', text: 'The ' + p.hot.length + ' pages touched in the most intervals' + (gone ? '; ' + gone + ' left tracking before the end, unmapped most often (struck through)' : '') + '.' }));
		b.appendChild(tbl);
	}

	/* ---- processes ---- */

	/* "pid N program args, peak X MiB": each process's size in the tree,
	 * from its profile's summary or, for one that ended within an interval,
	 * from its note. */
	function procLabel(pr) {
		var p = pr.profile, m = pr.measured, size = null;
		var name = p ? basename(p.exe) + (p.argv.length > 1 ? ' ' + p.argv.slice(1).join(' ') : '') :
			m ? basename(m.exe) + ' (no profile: it ended within an interval)' :
			pr.reason ? 'no profile: ' + pr.reason : 'profile unreadable: ' + pr.path;
		if (name.length > 60) name = name.slice(0, 57) + '...';
		if (p && p.summary && p.summary.data && p.summary.data.peak !== null && p.summary.data.peak !== undefined)
			size = { peak: p.summary.data.peak, est: !!p.sampled };
		else if (m)
			size = { peak: m.data_peak, est: m.estimated };
		var mib = function (pages) { return (pages * (p ? p.page_size : DATA.procs[0].profile ? DATA.procs[0].profile.page_size : 4096) / 1048576).toFixed(1); };
		return 'pid ' + (pr.pid === null ? '?' : pr.pid) + ' ' + name +
			(size ? ', peak ' + (size.est ? '≈ ' : '') + mib(size.peak) + ' MiB' : '');
	}

	/* The processes as a tree by pid and ppid: the profiles given and those
	 * their process records name, and the notes of processes without one. */
	function renderProcs() {
		var nav = document.getElementById('procs'), P = DATA.procs;
		nav.textContent = '';
		if (P.length < 2) return;
		var byPid = {}, kids = {};
		P.forEach(function (pr, i) { if (pr.pid !== null && byPid[pr.pid] === undefined) byPid[pr.pid] = i; });
		var roots = [];
		P.forEach(function (pr, i) {
			var parent = pr.ppid !== null ? byPid[pr.ppid] : undefined;
			if (parent !== undefined && parent !== i) (kids[parent] = kids[parent] || []).push(i);
			else roots.push(i);
		});
		function list(ids) {
			var ul = el('ul');
			ids.forEach(function (i) {
				var pr = P[i], btn = el('button', { type: 'button', class: 'wss-proc' + (pr.profile ? '' : ' none') + (i === state.proc ? ' selected' : ''), 'data-proc': i, text: procLabel(pr) });
				if (pr.profile) btn.addEventListener('click', function () { select(i); });
				else btn.disabled = true;
				ul.appendChild(el('li', {}, [btn, kids[i] ? list(kids[i]) : null]));
			});
			return ul;
		}
		nav.appendChild(el('div', { class: 'note', text: P.length + ' processes (' + P.filter(function (q) { return q.profile; }).length + ' with a profile); pick one:' }));
		nav.appendChild(list(roots));
	}

	function select(i) {
		var pr = DATA.procs[i];
		if (!pr || !pr.profile) return;
		state.proc = i;
		state.charts = [];
		state.flame = 'run';
		var p = prepare(pr);
		/* The x axis: time, or with the manual time base (ticks from
		 * wss_tick(), whenever the program makes them) the sample's seq. */
		if (p.time_base === 'manual') {
			state.x = new Float64Array(p.n);
			for (var k = 0; k < p.n; k++) state.x[k] = k + 1;
			state.xLabel = function (x) { return 'seq ' + Math.round(x); };
		} else {
			state.x = p.S.t_ns;
			state.xLabel = function (x, span) { return (x / 1e9).toFixed(span < 5e7 ? 4 : span < 5e9 ? 3 : 1) + 's'; };
		}
		document.getElementById('title').textContent = basename(p.exe) + ' (pid ' + p.pid + ')';
		document.title = 'wss report: ' + basename(p.exe) + ' (pid ' + p.pid + ')';
		zoomTo(-Infinity, Infinity);
		renderProcs();
		renderRun(pr);
		renderTimeline(pr);
		renderThreads(pr);
		renderFlame(pr);
		renderAnalyses(pr);
		renderAlloc(pr);
		renderHot(pr);
		state.charts.forEach(function (c) { c.draw(); });
	}

	window.addEventListener('resize', scheduleDraw);
	var first = DATA.procs.findIndex(function (pr) { return pr.profile; });
	if (first >= 0) select(first);
	else document.querySelector('main').textContent = 'No profile could be read.';
	/* For the tests and the benchmark: the page has drawn itself. */
	document.documentElement.setAttribute('data-wss-rendered', String(Math.round(performance.now())));
})();
