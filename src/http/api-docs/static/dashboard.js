// The live dashboard (/dashboard): polls /stats (and /metrics for queue
// depths, when metrics are enabled) and draws them with Chart.js.
// ?refresh=<seconds> sets the period (default 5, 1 to 300).
(function () {
  'use strict';
  var params = new URLSearchParams(location.search);
  var refreshSeconds = Math.min(300, Math.max(1, Number(params.get('refresh')) || 5));
  var HISTORY = 60;
  var history = [];
  var charts = {};
  var refreshes = 0;
  var metricsAvailable = true;

  var palette = ['#2563eb', '#16a34a', '#dc2626', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777'];

  function text(id, value) {
    document.getElementById(id).textContent = value;
  }

  function percent(rate) {
    return (rate * 100).toFixed(1) + ' %';
  }

  function barChart(id, title, stacked) {
    return new window.Chart(document.getElementById(id), {
      type: 'bar',
      data: { labels: [], datasets: [] },
      options: {
        animation: { duration: 250 },
        responsive: true,
        maintainAspectRatio: false,
        plugins: { title: { display: true, text: title } },
        scales: { x: { stacked: !!stacked }, y: { stacked: !!stacked, beginAtZero: true } },
      },
    });
  }

  function setup() {
    charts.requests = new window.Chart(document.getElementById('chart-requests'), {
      type: 'line',
      data: {
        labels: [],
        datasets: [{ label: 'requests / s', data: [], borderColor: palette[0], tension: 0.2, fill: false }],
      },
      options: {
        animation: false,
        responsive: true,
        maintainAspectRatio: false,
        plugins: { title: { display: true, text: 'Request rate (/v1)' } },
        scales: { y: { beginAtZero: true } },
      },
    });
    charts.cache = barChart('chart-cache', 'Cache lookups', true);
    charts.providerRequests = barChart('chart-provider-requests', 'Requests per provider');
    charts.providerTokens = barChart('chart-provider-tokens', 'Tokens per provider');
    charts.providerLatency = barChart('chart-provider-latency', 'Average provider latency (s)');
    charts.queueDepth = barChart('chart-queue-depth', 'Jobs waiting per provider queue');
    charts.cooldowns = barChart('chart-cooldowns', 'Deployment cooldown left (s; routed providers)');
  }

  function setBars(chart, labels, datasets) {
    chart.data.labels = labels;
    chart.data.datasets = datasets.map(function (d, i) {
      return { label: d.label, data: d.data, backgroundColor: d.color || palette[i % palette.length] };
    });
    chart.update();
  }

  /** One per-provider gauge of the Prometheus text: provider -> value. */
  function parseProviderGauge(text, name) {
    var out = {};
    var re = new RegExp('^' + name + '\\{provider="([^"]+)"\\} ([0-9.eE+-]+)$', 'gm');
    var m;
    while ((m = re.exec(text))) out[m[1]] = Number(m[2]);
    return out;
  }

  function render(stats, gauges) {
    text('total-requests', String(stats.total_requests));
    text('requests-throttled', String(stats.rate_limit_stats.requests_throttled));
    text('exact-hit-rate', percent(stats.cache_stats.exact_cache.hit_rate));
    text('semantic-hit-rate', percent(stats.cache_stats.semantic_cache.hit_rate));

    var now = Date.now();
    var last = history[history.length - 1];
    history.push({ t: now, total: stats.total_requests });
    if (history.length > HISTORY) history.shift();
    if (last) {
      var rate = Math.max(0, (stats.total_requests - last.total) / ((now - last.t) / 1000));
      charts.requests.data.labels.push(new Date(now).toLocaleTimeString());
      charts.requests.data.datasets[0].data.push(Number(rate.toFixed(2)));
      if (charts.requests.data.labels.length > HISTORY) {
        charts.requests.data.labels.shift();
        charts.requests.data.datasets[0].data.shift();
      }
      charts.requests.update();
    }

    var exact = stats.cache_stats.exact_cache;
    var semantic = stats.cache_stats.semantic_cache;
    setBars(
      charts.cache,
      ['exact', 'semantic'],
      [
        { label: 'hits', data: [exact.hits, semantic.hits], color: palette[1] },
        { label: 'misses', data: [exact.misses, semantic.misses], color: palette[2] },
      ],
    );

    var providers = Object.keys(stats.provider_stats).sort();
    var ps = stats.provider_stats;
    setBars(charts.providerRequests, providers, [
      {
        label: 'requests',
        data: providers.map(function (p) {
          return ps[p].requests;
        }),
      },
    ]);
    setBars(charts.providerTokens, providers, [
      {
        label: 'tokens',
        data: providers.map(function (p) {
          return ps[p].tokens;
        }),
        color: palette[3],
      },
    ]);
    setBars(charts.providerLatency, providers, [
      {
        label: 'seconds',
        data: providers.map(function (p) {
          return ps[p].avg_latency;
        }),
        color: palette[4],
      },
    ]);
    if (gauges) {
      var depths = gauges.depths;
      var queued = Object.keys(depths).sort();
      setBars(charts.queueDepth, queued, [
        {
          label: 'waiting jobs',
          data: queued.map(function (p) {
            return depths[p];
          }),
          color: palette[5],
        },
      ]);
      var cooling = gauges.cooldowns;
      var routed = Object.keys(cooling).sort();
      setBars(charts.cooldowns, routed, [
        {
          label: 'seconds left',
          data: routed.map(function (p) {
            return cooling[p];
          }),
          color: palette[0],
        },
      ]);
    }

    tableRows(
      'top-users',
      stats.rate_limit_stats.top_users.map(function (u) {
        return [u.api_key, String(u.requests)];
      }),
    );

    // key_spend is absent when the key store cannot be read, or for a caller with a key from API_KEYS.
    var spend = stats.key_spend;
    text('spend-today', spend ? usd(spend.cost_today_usd) : '–');
    var saved = stats.spend_saved;
    text('spend-saved', saved ? usd(saved.gateway_cache_usd) + ' / ' + usd(saved.prompt_cache_usd) : '–');
    tableRows(
      'key-spend',
      (spend ? spend.keys : []).map(function (k) {
        return [
          k.api_key,
          k.owner,
          k.team || '',
          String(k.requests),
          String(k.prompt_tokens + k.completion_tokens),
          usd(k.cost_today_usd),
          usd(k.cost_usd),
        ];
      }),
    );
  }

  function usd(amount) {
    return '$' + (amount < 0.01 && amount > 0 ? amount.toPrecision(2) : amount.toFixed(2));
  }

  // textContent only: owners and teams are the operator's free text.
  function tableRows(id, rows) {
    var body = document.getElementById(id);
    body.innerHTML = '';
    rows.forEach(function (cells) {
      var row = document.createElement('tr');
      cells.forEach(function (value) {
        var cell = document.createElement('td');
        cell.textContent = value;
        row.appendChild(cell);
      });
      body.appendChild(row);
    });
  }

  async function refresh() {
    try {
      var stats = await window.GatewayKey.load('stats', { message: 'Enter a gateway API key to read /stats.' });
      var gauges = null;
      if (metricsAvailable) {
        try {
          var metrics = await window.GatewayKey.load('metrics', { text: true, prompt: false });
          gauges = {
            depths: parseProviderGauge(metrics, 'gateway_queue_depth'),
            cooldowns: parseProviderGauge(metrics, 'gateway_deployment_cooldown_seconds'),
          };
        } catch (err) {
          // 404: metrics disabled on this gateway; stop asking.
          if (err.status === 404) metricsAvailable = false;
        }
      }
      render(stats, gauges);
      refreshes++;
      document.body.dataset.refreshes = String(refreshes);
      text('status', 'Updated ' + new Date().toLocaleTimeString() + ' · every ' + refreshSeconds + ' s');
    } catch (err) {
      text('status', 'Update failed: ' + err.message);
    }
  }

  setup();
  refresh().finally(function () {
    setInterval(refresh, refreshSeconds * 1000);
  });
})();
