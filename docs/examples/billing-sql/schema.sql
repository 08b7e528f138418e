-- A small billing system, in standard SQL only: no variant file. tdebench rewrites every statement for each
-- engine family (sqlglot) and has each engine plan it against the empty schema before any data is loaded.

CREATE TABLE accounts (
  account_id INTEGER PRIMARY KEY,
  name       VARCHAR(60) NOT NULL,
  city       VARCHAR(40) NOT NULL,
  plan       VARCHAR(20) NOT NULL,
  opened     DATE        NOT NULL
);

CREATE TABLE invoices (
  invoice_id INTEGER PRIMARY KEY,
  account_id INTEGER       NOT NULL REFERENCES accounts (account_id),
  issued     DATE          NOT NULL,
  due        DATE          NOT NULL,
  paid_at    TIMESTAMP,                -- NULL while unpaid
  amount     DECIMAL(10,2) NOT NULL,
  note       TEXT
);

CREATE INDEX invoices_account_idx ON invoices (account_id);
CREATE INDEX invoices_issued_idx ON invoices (issued);
