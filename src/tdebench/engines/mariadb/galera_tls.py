"""TLS for a cluster's replication traffic (``transport=tls``): a private CA made for one cluster and one node
certificate for 127.0.0.1 signed by it, in ``<cluster>/tls/`` (:mod:`tdebench.engines.toolkit.tls`). The directory
goes with the cluster (``destroy()``), and also when the cluster is kept (``--keep``).

The galera-4 provider's own TLS (``socket.ssl``, ``socket.ssl_cert``, ``socket.ssl_key``, ``socket.ssl_ca``;
names checked in MariaDB's Galera reference and in the provider library) encrypts group communication, write
sets and IST between the nodes.
"""

from __future__ import annotations

from tdebench.engines.toolkit.tls import TlsFiles


def provider_options(files: TlsFiles) -> list[str]:
    """The galera-4 provider's options that turn its TLS on with ``files``."""
    return ["socket.ssl=YES", f"socket.ssl_ca={files.ca}", f"socket.ssl_cert={files.cert}",
            f"socket.ssl_key={files.key}"]
