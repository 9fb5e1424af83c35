// jobtable dashboard: the overview's live counts and throughput, a job's live progress.
// Every value from the server is put on the page with textContent, never as markup.
"use strict";

(function () {
  var FINAL = { succeeded: true, failed: true };
  var STATES = ["scheduled", "available", "retrying", "running", "succeeded", "failed",
                "cancelled", "timed_out"];

  function setText(element, text) {
    if (element && element.textContent !== String(text)) element.textContent = String(text);
  }

  function cell(text, className) {
    var td = document.createElement("td");
    td.textContent = text;
    if (className) td.className = className;
    return td;
  }

  // -- overview ------------------------------------------------------------

  // Throughput: jobs finished (succeeded + failed) per minute, from the counts read over
  // the last minute. A count that went down (retention pruned finished jobs) starts over.
  var WINDOW_SECONDS = 60;

  function finishedCounts(queues) {
    var counts = { "*": 0 };
    queues.forEach(function (queue) {
      var done = (queue.counts.succeeded || 0) + (queue.counts.failed || 0);
      counts[queue.name] = done;
      counts["*"] += done;
    });
    return counts;
  }

  function rateText(samples, name) {
    var first = samples[0], last = samples[samples.length - 1];
    if (samples.length < 2 || last.at <= first.at) return "measuring…";
    if (!(name in first.counts) || !(name in last.counts)) return "—";
    var done = last.counts[name] - first.counts[name];
    if (done < 0) return "—";
    var perMinute = (done * 60) / (last.at - first.at);
    if (perMinute === 0) return "0";
    return perMinute >= 10 ? perMinute.toFixed(0) : perMinute.toFixed(1);
  }

  function readRenderedQueues() {
    var queues = [];
    document.querySelectorAll("tr[data-queue]").forEach(function (row) {
      var counts = { succeeded: Number(row.dataset.succeeded), failed: Number(row.dataset.failed) };
      queues.push({ name: row.dataset.queue, paused: row.dataset.paused === "true", counts: counts });
    });
    return queues;
  }

  function ageText(seconds) {
    if (seconds === undefined || seconds === null) return "—";
    var s = Math.round(seconds);
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min";
    return Math.floor(s / 3600) + " h";
  }

  function sameNumber(shown, value) {
    // A row's data attribute ("" for none) against a value the API gave (null for none).
    return shown === "" ? value === null || value === undefined : Number(shown) === value;
  }

  function sameLimits(row, queue) {
    var rate = queue.rate || { n: null, per: null };
    return sameNumber(row.dataset.limit, queue.limit) &&
      sameNumber(row.dataset.rateN, rate.n) && sameNumber(row.dataset.ratePer, rate.per);
  }

  function sameQueues(queues) {
    var rows = document.querySelectorAll("tr[data-queue]");
    if (rows.length !== queues.length) return false;
    return queues.every(function (queue, i) {
      return rows[i].dataset.queue === queue.name &&
        rows[i].dataset.paused === (queue.paused ? "true" : "false") &&
        sameLimits(rows[i], queue);
    });
  }

  function showRunners(runners) {
    var body = document.querySelector("#runners tbody");
    if (!body) return;
    var rows = runners.map(function (runner) {
      var tr = document.createElement("tr");
      tr.appendChild(cell(runner.id, "id"));
      tr.appendChild(cell(runner.host));
      tr.appendChild(cell(runner.pid));
      tr.appendChild(cell(runner.kinds.join(", ")));
      tr.appendChild(cell(runner.queues === null ? "all" : runner.queues.join(", ")));
      tr.appendChild(cell(runner.workers));
      tr.appendChild(cell(runner.busy));
      tr.appendChild(cell(runner.last_seen.replace("T", " ").replace(/\.\d+/, "").replace("+00:00", " UTC")));
      return tr;
    });
    if (rows.length === 0) {
      var empty = document.createElement("tr");
      var td = cell("No runner is live.");
      td.colSpan = 8;
      empty.appendChild(td);
      rows = [empty];
    }
    body.replaceChildren.apply(body, rows);
  }

  function showLimits(rows) {
    var shown = document.querySelectorAll("tr[data-limited]");
    if (shown.length !== rows.length) {
      // A queue was limited or freed elsewhere: the server draws the panel.
      window.location.reload();
      return;
    }
    rows.forEach(function (row, i) {
      var tr = shown[i];
      if (tr.dataset.limited !== row.what + ":" + row.name) return;
      setText(tr.querySelector("td[data-limit-running]"), row.running);
      setText(tr.querySelector("td[data-limit-held]"), row.held_back);
    });
  }

  function showOverview(data, samples) {
    if (!sameQueues(data.queues)) {
      // A queue appeared, went or was paused elsewhere: the server draws its row and button.
      window.location.reload();
      return;
    }
    STATES.forEach(function (state) {
      var total = data.queues.reduce(function (sum, q) { return sum + (q.states[state] || 0); }, 0);
      setText(document.querySelector('[data-total="' + state + '"]'), total);
    });
    var oldest = data.oldest_waiting || {};
    data.queues.forEach(function (queue) {
      var row = document.querySelector('tr[data-queue="' + CSS.escape(queue.name) + '"]');
      STATES.forEach(function (state) {
        setText(row.querySelector('td[data-state="' + state + '"] a'), queue.states[state] || 0);
      });
      setText(row.querySelector("td[data-held]"), queue.held_back);
      setText(row.querySelector("td[data-oldest]"), ageText(oldest[queue.name]));
    });
    showLimits(data.limits || []);
    showRunners(data.runners);
    if (data.at <= samples[samples.length - 1].at) return; // the read the last poll had
    samples.push({ at: data.at, counts: finishedCounts(data.queues) });
    var last = samples[samples.length - 1];
    var dropped = Object.keys(last.counts).some(function (name) {
      return samples.some(function (s) { return name in s.counts && s.counts[name] > last.counts[name]; });
    });
    if (dropped) samples.splice(0, samples.length - 1);
    while (samples.length > 2 && last.at - samples[1].at >= WINDOW_SECONDS) samples.shift();
    storeSamples(samples);
    showRates(samples);
  }

  function showRates(samples) {
    document.querySelectorAll("[data-rate]").forEach(function (element) {
      setText(element, rateText(samples, element.dataset.rate));
    });
  }

  // The reads are kept in the tab's session storage, so the rate survives the page drawing
  // itself again (after a pause, or a queue that appeared).
  var STORED = "jobtable-finished-counts";

  function restoreSamples(first) {
    var kept = [];
    try {
      kept = JSON.parse(window.sessionStorage.getItem(STORED) || "[]");
    } catch (error) {
      kept = [];
    }
    kept = kept.filter(function (s) {
      return typeof s.at === "number" && s.at < first.at && first.at - s.at <= WINDOW_SECONDS;
    });
    return kept.concat([first]);
  }

  function storeSamples(samples) {
    try {
      window.sessionStorage.setItem(STORED, JSON.stringify(samples));
    } catch (error) {
      /* storage full or refused: the rate starts again after a reload */
    }
  }

  function followOverview(body) {
    var first = { at: Number(body.dataset.at), counts: finishedCounts(readRenderedQueues()) };
    var samples = restoreSamples(first);
    showRates(samples);
    var every = Number(body.dataset.poll) * 1000;
    function poll() {
      fetch(body.dataset.source, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) {
          if (response.status === 401) window.location.assign("/ui/login?next=/ui/");
          if (!response.ok) throw new Error("HTTP " + response.status);
          return response.json();
        })
        .then(function (data) { showOverview(data, samples); })
        .catch(function () { /* the next poll tries again */ })
        .finally(function () { window.setTimeout(poll, every); });
    }
    window.setTimeout(poll, every);
  }

  // -- a job's page ----------------------------------------------------------

  function showJob(job, version) {
    var status = document.querySelector('[data-field="status"]');
    setText(status, job.status);
    status.className = "status status-" + job.status;
    setText(document.querySelector('[data-field="result"]'), JSON.stringify(job.result, null, 2));
    setText(document.querySelector('[data-field="error"]'), job.error === null ? "—" : job.error);
    var now = new Date().toISOString().slice(11, 19);
    setText(document.querySelector('[data-field="live"]'), "Live: change " + version + " at " + now + " UTC");
  }

  function followJob(body) {
    var rendered = body.dataset.status;
    var version = body.dataset.version;
    var live = document.querySelector('[data-field="live"]');
    if (FINAL[rendered]) {
      setText(live, "Finished.");
      return;
    }
    function open() {
      var source = new EventSource(body.dataset.events + "?after=" + encodeURIComponent(version));
      function onChange(event) {
        var job = JSON.parse(event.data);
        version = event.lastEventId || version;
        showJob(job, version);
        if (FINAL[job.status]) source.close();
        if (job.status !== rendered) {
          // Attempts, reasons and buttons change with the status: the server draws them.
          source.close();
          window.location.replace(window.location.pathname);
        }
      }
      source.addEventListener("job", onChange);
      source.addEventListener("reset", onChange);
      source.onopen = function () { setText(live, "Live: following changes."); };
      source.onerror = function () {
        if (source.readyState === EventSource.CLOSED) {
          // Refused (a full server, an ended session): try again in a while.
          setText(live, "Not live: reconnecting…");
          window.setTimeout(open, 3000);
        } else {
          setText(live, "Not live: reconnecting…");
        }
      };
    }
    open();
  }

  // -- copy buttons: a list's short ids copy the whole id ------------------------

  function copyOnClick(event) {
    var button = event.target.closest ? event.target.closest("button.copy") : null;
    if (!button || !button.dataset.copy) return;
    var done = function () {
      button.classList.add("copied");
      setText(button, "copied");
      window.setTimeout(function () { button.classList.remove("copied"); setText(button, "copy"); }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(button.dataset.copy).then(done, function () {});
    } else {
      // Plain http on another host: select the id in a field the person can copy from.
      var field = document.createElement("input");
      field.value = button.dataset.copy;
      document.body.appendChild(field);
      field.select();
      try { if (document.execCommand("copy")) done(); } catch (ignored) { /* shown selected */ }
      document.body.removeChild(field);
    }
  }

  // -- charts: images the server draws, fetched again every so often ------------

  function refreshCharts() {
    var charts = document.querySelector("[data-refresh]");
    if (!charts) return;
    window.setInterval(function () {
      charts.querySelectorAll("img[data-chart]").forEach(function (img) {
        var url = new URL(img.src, window.location.href);
        url.searchParams.set("t", String(Date.now()));
        img.src = url.pathname + url.search;
      });
    }, Number(charts.dataset.refresh) * 1000);
  }

  document.addEventListener("DOMContentLoaded", function () {
    var body = document.body;
    document.addEventListener("click", copyOnClick);
    refreshCharts();
    if (body.dataset.page === "overview") followOverview(body);
    if (body.dataset.page === "job" && body.dataset.events) followJob(body);
  });
})();
