-- +goose Up
CREATE TABLE things (id bigint PRIMARY KEY, name text NOT NULL);
-- +goose Down
DROP TABLE things;
