-- Run once by the postgres image on a new data volume (docker-entrypoint-initdb.d), as the superuser:
-- Airflow's metadata gets its own role and database beside the service's (POSTGRES_DB).
CREATE ROLE airflow WITH LOGIN PASSWORD 'airflow';
CREATE DATABASE airflow OWNER airflow;
