-- Run once by the postgres image on first start (empty data volume).
-- One database per service; each service's migrations own its schema.
CREATE DATABASE identity;
CREATE DATABASE auth;
CREATE DATABASE platform;
