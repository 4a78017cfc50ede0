# Everything a developer runs. `make serve` and `make test` work on a fresh clone with only
# Python 3.11, git and make installed.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8000
STAMP := $(VENV)/.installed

.PHONY: install serve test unit lint fmt bench bench-render bench-million bench-scale bench-selftest bench-notifications bench-webhooks bench-leagues bench-quests bench-anomalies bench-leagues-week-end bench-streams fuzz mailsink clean

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

install: $(STAMP)

# Local development server: DEBUG on, SQLite, tasks inline, periodic jobs in-process.
serve: $(STAMP)
	DEBUG=$${DEBUG:-true} $(BIN)/python manage.py migrate --noinput
	DEBUG=$${DEBUG:-true} $(BIN)/python manage.py demo_setup
	DEBUG=$${DEBUG:-true} PUBLIC_URL=$${PUBLIC_URL:-http://127.0.0.1:$(PORT)} \
		$(BIN)/python manage.py serve --port $(PORT)

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports
	$(BIN)/mypy apps gamify
	DJANGO_SETTINGS_MODULE=gamify.settings_test $(BIN)/python manage.py makemigrations --check --dry-run

fmt: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

# Unit, API and contract tests. DATABASE_URL selects the database (SQLite when unset). After a
# run elsewhere than PostgreSQL, the tests marked sql and postgres run on TEST_POSTGRES_URL when
# it answers (tests/postgres_subset.py; empty: not at all).
TEST_POSTGRES_URL ?= postgres://postgres@127.0.0.1:5432/test
unit: $(STAMP)
	$(BIN)/pytest -n 2 -rs
	TEST_POSTGRES_URL="$(TEST_POSTGRES_URL)" $(BIN)/python tests/postgres_subset.py

test: lint unit

bench: $(STAMP)
	$(BIN)/python bench/run.py --compare --concurrency 16 --users 2000 --duration 10 --repeat 3
	$(BIN)/python bench/run.py --quests --concurrency 16 --users 2000 --duration 10 --repeat 3
	$(BIN)/python bench/streams.py

# How an event's cost grows with users (10,000, 1,000,000), boards per event (0-8) and a board's
# size (1,000-1,000,000): events/s, CPU and SQL statements per event (bench/scale.py).
bench-scale: $(STAMP)
	$(BIN)/python bench/run.py --scale --concurrency 16 --duration 10 --repeat 3

# What an active league costs an event: the same events of 2,000 users without and with a league,
# each user already in this week's cohort; events/s, CPU and SQL statements per event
# (bench/leagues.py).
bench-leagues: $(STAMP)
	$(BIN)/python bench/run.py --leagues --concurrency 16 --users 2000 --duration 10 --repeat 3

# Issue 30's performance: the same events without and with 3 active quests each event moves.
bench-quests: $(STAMP)
	$(BIN)/python bench/run.py --quests --concurrency 16 --users 2000 --duration 10 --repeat 3

# The same events without and with two active anomaly rules (bench/fairplay.py).
bench-anomalies: $(STAMP)
	$(BIN)/python bench/run.py --anomalies --concurrency 16 --users 2000 --duration 10 --repeat 3

# A league's week end over 1,000,000 users in 33,334 cohorts of 30, seeded in SQL: cohorts_finish
# by 1 and 2 worker processes, without and with rewards; time, memory, results checked
# (bench/leagues_week_end.py; a database of its own, about 5 minutes).
bench-leagues-week-end: $(STAMP)
	$(BIN)/python bench/leagues_week_end.py

# The live streams: 5,000 idle streams held by one uvicorn process (memory per connection,
# all still open after heartbeats), then 1,000 watched users' events with the streams on
# against the same events with them off, and the time from each event to its message at the
# client (bench/streams.py; a database of its own, about 2 minutes).
bench-streams: $(STAMP)
	$(BIN)/python bench/streams.py

# The harness's own tests: percentiles, the open loop's accounting, the statement count (a few
# seconds; SQLite, a server on 127.0.0.1 in a thread).
bench-selftest: $(STAMP)
	$(BIN)/pytest -n 0 -q -p no:randomly bench/test_loadgen.py bench/test_statement_count.py

# The render of one event's response body, in µs (bench/test_render_event.py).
bench-render: $(STAMP)
	$(BIN)/pytest bench/test_render_event.py -s -q -p no:randomly

# A 1,000,000-participant leaderboard next to a 1,000-participant one (bench/million.py).
bench-million: $(STAMP)
	$(BIN)/python bench/run.py --million --concurrency 16 --duration 10 --repeat 3

# schemathesis over every OpenAPI document against a live server (fuzz/run.py; README).
fuzz: $(STAMP)
	$(BIN)/python fuzz/run.py

# A streak-reminder run for 10,000 users through a local SMTP sink (bench/README.md).
bench-notifications: $(STAMP)
	$(BIN)/python bench/notifications.py

# Webhooks: the event path's cost with two endpoints, and deliveries per second.
bench-webhooks: $(STAMP)
	$(BIN)/python bench/webhooks.py

# A local SMTP server that prints every message it receives (EMAIL_HOST=127.0.0.1
# EMAIL_PORT=1025 make serve sends to it).
mailsink: $(STAMP)
	$(BIN)/python -m aiosmtpd -n -l 127.0.0.1:$${MAILSINK_PORT:-1025} -c aiosmtpd.handlers.Debugging stdout

clean:
	rm -rf $(VENV) db.sqlite3 .demo.json
