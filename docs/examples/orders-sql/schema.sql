-- An online shop's orders: the canonical schema (PostgreSQL SQL that MariaDB and SQLite run as well).
-- CREATE TABLE statements run before the load; the indexes after it.

CREATE TABLE customers (
  customer_id INTEGER PRIMARY KEY,
  name        VARCHAR(80)  NOT NULL,
  email       VARCHAR(120) NOT NULL,
  city        VARCHAR(60)  NOT NULL,
  country     CHAR(2)      NOT NULL,
  signed_up   DATE         NOT NULL,
  note        TEXT                     -- empty in data/customers.csv: NULL
);

CREATE TABLE products (
  product_id INTEGER PRIMARY KEY,
  name       VARCHAR(100)  NOT NULL,
  category   VARCHAR(40)   NOT NULL,
  price      DECIMAL(10,2) NOT NULL
);

CREATE TABLE orders (
  order_id     INTEGER PRIMARY KEY,
  customer_id  INTEGER      NOT NULL REFERENCES customers (customer_id),
  ordered_at   TIMESTAMP    NOT NULL,
  status       VARCHAR(12)  NOT NULL,
  shipped_on   DATE,                   -- NULL until shipped
  ship_address VARCHAR(160) NOT NULL
);

CREATE TABLE order_lines (
  order_id   INTEGER       NOT NULL REFERENCES orders (order_id),
  line_no    INTEGER       NOT NULL,
  product_id INTEGER       NOT NULL REFERENCES products (product_id),
  quantity   INTEGER       NOT NULL,
  unit_price DECIMAL(10,2) NOT NULL,
  PRIMARY KEY (order_id, line_no)
);

CREATE INDEX orders_customer_idx ON orders (customer_id);
CREATE INDEX orders_ordered_at_idx ON orders (ordered_at);
CREATE INDEX order_lines_product_idx ON order_lines (product_id);
