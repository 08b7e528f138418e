"""A private CA made for one use (a cluster's replication, a run's key server) and one certificate for 127.0.0.1
signed by it, in a directory of its own (0700, files 0600, owned by the service user that reads them). The CA's
private key exists only in memory while it signs and is never written. Its user deletes the directory with what it
protects (:func:`remove_tls`), also when data are kept (``--keep``): keys never outlive the run.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import pwd
import shutil
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tdebench.encryption import write_secret_file

_DAYS = 7  # a benchmark's certificate: valid for a week from an hour ago


@dataclass(frozen=True)
class TlsFiles:
    """Paths of the PEM files: the CA's certificate, the certificate and its private key."""

    directory: Path
    ca: Path
    cert: Path
    key: Path


def _name(text: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, text)])


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str, signer: ec.EllipticCurvePrivateKey,
                 ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now).not_valid_after(now + datetime.timedelta(days=_DAYS))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if not ca:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]), critical=False)
    return builder.sign(signer, hashes.SHA256())


def make_tls(directory: Path, label: str, owner: pwd.struct_passwd | None, role: str = "node") -> TlsFiles:
    """A fresh CA and a ``role`` certificate (``node``, ``server``) for ``label`` in ``directory`` (0700, files 0600,
    chowned to ``owner`` when given)."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    node_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = f"tdebench {label} CA"
    ca_cert = _certificate(ca_name, ca_key, ca_name, ca_key, ca=True)
    node_cert = _certificate(f"tdebench {label} {role}", node_key, ca_name, ca_key, ca=False)
    pem = serialization.Encoding.PEM
    files = TlsFiles(directory, directory / "ca.pem", directory / f"{role}-cert.pem", directory / f"{role}-key.pem")
    write_secret_file(files.ca, ca_cert.public_bytes(pem))
    write_secret_file(files.cert, node_cert.public_bytes(pem))
    write_secret_file(files.key, node_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
    if owner is not None:
        for path in (directory, files.ca, files.cert, files.key):
            os.chown(path, owner.pw_uid, owner.pw_gid)
    return files


def remove_tls(files: TlsFiles | None) -> None:
    if files is not None:
        shutil.rmtree(files.directory, ignore_errors=True)
