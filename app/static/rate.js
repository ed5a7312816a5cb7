// The rating page: sign in with a bearer token, pick a relevance set, grade the top ten
// results of each query 0-3. No framework and no innerHTML: every piece of text from the
// server goes in through textContent, so a snippet or title can never inject markup.
(function () {
  "use strict";

  var TOKEN_KEY = "ewall.rate.token";
  var GRADE_LABELS = ["niet relevant", "enigszins relevant", "relevant", "zeer relevant"];

  var state = {
    token: null,
    set: null, // {name, total}
    n: 1,
    data: null, // the last results response
    current: 0, // index of the selected result
    docLevel: false,
    busy: false,
  };

  function $(id) { return document.getElementById(id); }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function status(message, isError) {
    var box = $("status");
    box.textContent = message || "";
    box.className = isError ? "error" : "";
  }

  function show(section) {
    ["signin", "sets", "rating"].forEach(function (id) {
      $(id).classList.toggle("hidden", id !== section);
    });
    $("signout").classList.toggle("hidden", section === "signin");
  }

  // --- API ------------------------------------------------------------------------------

  function api(method, path, body) {
    var init = { method: method, headers: { "Authorization": "Bearer " + state.token }, cache: "no-store" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return fetch(path, init).then(function (response) {
      return response.text().then(function (text) {
        var payload = null;
        try { payload = text ? JSON.parse(text) : null; } catch (e) { payload = null; }
        if (response.ok) return payload;
        var err = new Error((payload && payload.error && payload.error.message) || ("HTTP " + response.status));
        err.status = response.status;
        throw err;
      });
    });
  }

  function failed(err) {
    if (err.status === 401) {
      signOut();
      status("Uw token is ongeldig of verlopen. Meld u opnieuw aan.", true);
    } else if (err.status === 403) {
      status("Uw rol staat beoordelen niet toe (de rol lawyer is nodig).", true);
    } else if (err.status === 404 && state.data) {
      status("Dit resultaat is niet (meer) zichtbaar voor u; het is niet opgeslagen.", true);
    } else {
      status("Er ging iets mis: " + err.message, true);
    }
  }

  // --- sign in --------------------------------------------------------------------------

  function signIn(token) {
    state.token = token;
    try { sessionStorage.setItem(TOKEN_KEY, token); } catch (e) { /* private mode: keep in memory */ }
    loadSets();
  }

  function signOut() {
    state.token = null;
    state.set = null;
    state.data = null;
    try { sessionStorage.removeItem(TOKEN_KEY); } catch (e) { /* nothing stored */ }
    $("token").value = "";
    $("who").textContent = "";
    show("signin");
    $("token").focus();
  }

  function whoFromToken(token) {
    // display only; the server verifies the token on every call
    try {
      var part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      var claims = JSON.parse(decodeURIComponent(escape(atob(part))));
      return claims.sub ? String(claims.sub) : "";
    } catch (e) { return ""; }
  }

  // --- sets -----------------------------------------------------------------------------

  function loadSets() {
    status("Sets laden…");
    api("GET", "/v1/eval/sets").then(function (data) {
      $("who").textContent = whoFromToken(state.token);
      var list = $("set-list");
      list.textContent = "";
      data.items.forEach(function (item) {
        var li = el("li");
        var button = el("button", { type: "button" });
        button.appendChild(el("span", { "class": "title" }, item.name));
        button.appendChild(document.createTextNode(" "));
        button.appendChild(el("span", { "class": "muted" },
          item.progress.rated + " van " + item.queries + " vragen beoordeeld" +
          (item.description ? " · " + item.description : "")));
        button.addEventListener("click", function () { openSet(item.name); });
        li.appendChild(button);
        list.appendChild(li);
      });
      show("sets");
      if (!data.items.length) {
        status("Er zijn nog geen beoordelingssets.");
        return;
      }
      status(data.items.length + " set(s) beschikbaar. Kies er een met Tab en Enter.");
      list.querySelector("button").focus();
    }).catch(failed);
  }

  function openSet(name) {
    status("Set openen…");
    api("GET", "/v1/eval/sets/" + encodeURIComponent(name)).then(function (data) {
      state.set = { name: data.name, total: data.queries.length };
      if (!data.queries.length) { status("Deze set heeft geen vragen.", true); return; }
      // resume at the first query this person has not rated yet
      var first = data.queries.filter(function (q) { return !q.rated; })[0];
      state.n = first ? first.n : 1;
      show("rating");
      loadQuery(state.n);
    }).catch(failed);
  }

  // --- a query and its results ----------------------------------------------------------

  function loadQuery(n) {
    if (!state.set || state.busy) return;
    if (n < 1 || n > state.set.total) {
      status(n < 1 ? "Dit is de eerste vraag." : "Dit was de laatste vraag van de set.");
      return;
    }
    state.busy = true;
    status("Resultaten laden…");
    api("GET", "/v1/eval/sets/" + encodeURIComponent(state.set.name) + "/queries/" + n + "/results")
      .then(function (data) {
        state.n = n;
        state.data = data;
        state.current = 0;
        render();
        status(data.results.length ? "Vraag " + n + " geladen: " + data.results.length + " resultaten." :
          "Geen resultaten voor deze vraag.");
      })
      .catch(failed)
      .then(function () { state.busy = false; });
  }

  function gradeOf(result) {
    return state.docLevel ? result.document_grade : result.grade;
  }

  function render() {
    var data = state.data;
    $("set-name").textContent = data.set;
    $("query-n").textContent = data.n;
    $("query-total").textContent = data.total;
    $("query-title").textContent = data.query.text;
    renderProgress(data.progress);
    var list = $("results");
    list.textContent = "";
    data.results.forEach(function (r, i) {
      var li = el("li", { id: "result-" + i, tabindex: "-1", "aria-current": "false",
        "aria-label": "Resultaat " + r.rank + ": " + (r.title || r.external_id) });
      li.appendChild(el("div", { "class": "title" }, r.rank + ". " + (r.title || r.external_id)));
      var meta = [];
      if (r.matter_id) meta.push("zaak " + r.matter_id);
      if (r.section_path) meta.push(r.section_path);
      if (r.page_from) meta.push(r.page_to && r.page_to !== r.page_from ? "p. " + r.page_from + "–" + r.page_to : "p. " + r.page_from);
      meta.push(r.source + ":" + r.external_id);
      li.appendChild(el("div", { "class": "meta" }, meta.join(" · ")));
      var snippet = el("p", { "class": "snippet" });
      (r.snippet_parts || []).forEach(function (part) {
        snippet.appendChild(part.hit ? el("b", {}, part.text) : document.createTextNode(part.text));
      });
      li.appendChild(snippet);
      var grades = el("div", { "class": "grades", role: "group", "aria-label": "Beoordeling van resultaat " + r.rank });
      for (var g = 0; g <= 3; g++) {
        var b = el("button", { type: "button", "data-grade": String(g), "aria-pressed": "false",
          "aria-label": "Cijfer " + g + ", " + GRADE_LABELS[g] + ", voor resultaat " + r.rank }, g + " " + GRADE_LABELS[g]);
        b.addEventListener("click", (function (index, grade) {
          return function () { select(index, false); rate(index, grade); };
        })(i, g));
        grades.appendChild(b);
      }
      li.appendChild(grades);
      li.addEventListener("click", (function (index) { return function () { select(index, false); }; })(i));
      list.appendChild(li);
      paintGrade(i);
    });
    select(0, true);
  }

  function renderProgress(progress) {
    $("progress").max = Math.max(progress.total, 1);
    $("progress").value = progress.rated;
    $("progress-text").textContent = progress.rated + " van " + progress.total + " vragen beoordeeld";
  }

  function paintGrade(i) {
    var r = state.data.results[i];
    var grade = gradeOf(r);
    var li = $("result-" + i);
    li.querySelectorAll("button[data-grade]").forEach(function (b) {
      b.setAttribute("aria-pressed", String(grade !== null && grade !== undefined && Number(b.getAttribute("data-grade")) === grade));
    });
  }

  function select(i, focus) {
    if (!state.data || !state.data.results.length) return;
    i = Math.max(0, Math.min(i, state.data.results.length - 1));
    var old = $("result-" + state.current);
    if (old) old.setAttribute("aria-current", "false");
    state.current = i;
    var li = $("result-" + i);
    li.setAttribute("aria-current", "true");
    if (focus !== false) {
      li.focus();
      li.scrollIntoView({ block: "nearest" });
    }
  }

  function rate(i, grade) {
    var r = state.data && state.data.results[i];
    if (!r) return;
    var body = {
      set: state.data.set,
      query_key: state.data.query.query_key,
      target_kind: state.docLevel ? "document" : "chunk",
      target_id: state.docLevel ? r.document_target : r.chunk_id,
      grade: grade,
    };
    api("POST", "/v1/eval/judgements", body).then(function (saved) {
      if (state.docLevel) {
        // one grade for the document covers each of its passages in the list
        state.data.results.forEach(function (other, j) {
          if (other.document_target === r.document_target) { other.document_grade = grade; paintGrade(j); }
        });
      } else {
        r.grade = grade;
        paintGrade(i);
      }
      renderProgress(saved.progress);
      status("Opgeslagen: resultaat " + r.rank + " kreeg " + grade + " (" + GRADE_LABELS[grade] + ").");
    }).catch(failed);
  }

  // --- keyboard -------------------------------------------------------------------------

  function toggleHelp() {
    var dialog = $("help");
    if (dialog.open) { dialog.close(); return; }
    dialog.showModal();
    $("help-close").focus();
  }

  function onKey(event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var target = event.target;
    var typing = target && (target.tagName === "INPUT" && target.type !== "checkbox" || target.tagName === "TEXTAREA");
    if (typing) return;
    if (event.key === "?") { event.preventDefault(); toggleHelp(); return; }
    if ($("help").open || $("rating").classList.contains("hidden") || !state.data) return;
    var key = event.key;
    if (key === "j" || key === "ArrowDown") { event.preventDefault(); select(state.current + 1); }
    else if (key === "k" || key === "ArrowUp") { event.preventDefault(); select(state.current - 1); }
    else if (key === "n" || key === "ArrowRight") { event.preventDefault(); loadQuery(state.n + 1); }
    else if (key === "p" || key === "ArrowLeft") { event.preventDefault(); loadQuery(state.n - 1); }
    else if (key === "d") { event.preventDefault(); $("doc-level").click(); }
    else if (/^[0-3]$/.test(key)) {
      event.preventDefault();
      var index = state.current;
      rate(index, Number(key));
      select(index + 1);
    }
  }

  // --- wiring ---------------------------------------------------------------------------

  document.addEventListener("DOMContentLoaded", function () {
    $("signin-form").addEventListener("submit", function (event) {
      event.preventDefault();
      var token = $("token").value.trim().replace(/^Bearer\s+/i, "");
      if (!token) { status("Plak eerst een token.", true); $("token").focus(); return; }
      signIn(token);
    });
    $("signout").addEventListener("click", signOut);
    $("back").addEventListener("click", function () { state.data = null; loadSets(); });
    $("prev").addEventListener("click", function () { loadQuery(state.n - 1); });
    $("next").addEventListener("click", function () { loadQuery(state.n + 1); });
    $("help-button").addEventListener("click", toggleHelp);
    $("help-close").addEventListener("click", toggleHelp);
    $("doc-level").addEventListener("change", function (event) {
      state.docLevel = event.target.checked;
      if (state.data) state.data.results.forEach(function (_, i) { paintGrade(i); });
      status(state.docLevel ? "U beoordeelt nu hele documenten." : "U beoordeelt nu afzonderlijke passages.");
      select(state.current);
    });
    document.addEventListener("keydown", onKey);
    var saved = null;
    try { saved = sessionStorage.getItem(TOKEN_KEY); } catch (e) { saved = null; }
    if (saved) { signIn(saved); } else { show("signin"); $("token").focus(); }
  });
})();
