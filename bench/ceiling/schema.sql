-- The ceiling's tables, in the benchmark database beside gamify's (bench/ceiling/views.py).
CREATE TABLE IF NOT EXISTS ceiling_user (
    id bigserial PRIMARY KEY,
    external_id varchar(255) NOT NULL UNIQUE,
    created timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS ceiling_event (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES ceiling_user (id),
    metric varchar(100) NOT NULL,
    value numeric(24, 6) NOT NULL,
    created timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS ceiling_total (
    user_id bigint NOT NULL REFERENCES ceiling_user (id),
    metric varchar(100) NOT NULL,
    total numeric(24, 6) NOT NULL,
    PRIMARY KEY (user_id, metric)
);
CREATE INDEX IF NOT EXISTS ceiling_total_rank ON ceiling_total (metric, total DESC);
CREATE TABLE IF NOT EXISTS ceiling_streak (
    user_id bigint PRIMARY KEY REFERENCES ceiling_user (id),
    length integer NOT NULL,
    last_day date NOT NULL
);
CREATE TABLE IF NOT EXISTS ceiling_award (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES ceiling_user (id),
    points integer NOT NULL,
    created timestamptz NOT NULL
);
CREATE TABLE IF NOT EXISTS ceiling_points (
    user_id bigint PRIMARY KEY REFERENCES ceiling_user (id),
    total bigint NOT NULL
);
