-- One PostgreSQL server, three databases: the HAT Ops store, MLflow's and Prefect's.
CREATE DATABASE hat;
CREATE DATABASE mlflow;
CREATE DATABASE prefect;
