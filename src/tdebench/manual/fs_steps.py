"""The texts of ``tdebench tde-setup`` for filesystem encryption (``fs:fscrypt``, ``fs:gocryptfs``): the steps a
DBA takes to move a MariaDB or MySQL data directory into an encrypted layer, with the downtime the ``encrypt``
workload measured doing exactly that (docs/workloads/encrypt.md), labelled as measured here, and the command that
measures it on the reader's own data.

Neither layer encrypts files that exist: fscrypt sets a policy on an empty directory only, gocryptfs encrypts what
is written through its mount. So the data directory is copied into a new, empty, encrypted place with the server
stopped; the old copy stays in the clear until it is deleted, and deleting frees its blocks without overwriting
them. Placeholders only, never a secret.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

from tdebench.manual.tdesetup import Setup

_RULE = "=" * 92


@dataclass(frozen=True)
class Measured:
    """What the encrypt workload measured switching one layer on, here (medians over the trials of one run)."""

    downtime_s: float  # server stopped → serving again from the copy
    copied_mib: float  # the data directory's size (the copy)
    copy_mib_s: float  # the copy's throughput (cp -a, each file fsynced)
    extra_disk_mib: float  # peak extra disk (both copies at once)
    way_back_s: float  # the same, back out of the layer


#: docs/workloads/encrypt.md, "Measured: switching into fscrypt and gocryptfs" (the same run)
RUN = ("tdebench run --engine mariadb --encryption fs:fscrypt,fs:gocryptfs,tde:aes-256-ctr --workload encrypt "
       "--warehouses 1 --workload-option steady=10s --workload-option threads=1 --trials 3")
WHERE = ("MariaDB 10.11, TPC-C 1 warehouse, default settings (a 512 MiB redo log), a 2-vCPU VM busy with other "
         "work, its virtual disk, 2026-11-29")
MEASURED: dict[str, Measured] = {
    "fscrypt": Measured(12.6, 772, 65, 621, 2.0),
    "gocryptfs": Measured(7.6, 772, 114, 687, 6.9),
}


@dataclass(frozen=True)
class Service:
    """How a server of that family is run on Debian/Ubuntu: its systemd unit, OS user, option file group."""

    name: str  # tde-setup's engine name
    unit: str
    user: str
    group: str  # my.cnf group
    client: str
    option_file: str


SERVICES = (Service("mariadb", "mariadb", "mysql", "[mariadb]", "mariadb", "/etc/mysql/mariadb.conf.d/99-datadir.cnf"),
            Service("mysql", "mysql", "mysql", "[mysqld]", "mysql", "/etc/mysql/mysql.conf.d/99-datadir.cnf"))


def _step(number: int, title: str) -> list[str]:
    return ["", f"# {_RULE}", f"# Step {number}: {title}", f"# {_RULE}"]


def _measured(layer: str) -> list[str]:
    """The downtime measured here, with the command that measured it and the one to measure it on one's own data."""
    m = MEASURED[layer]
    said = (f"Measured here ({WHERE}): the service was down {m.downtime_s:.1f} s to copy {m.copied_mib:.0f} MiB "
            f"({m.copy_mib_s:.0f} MiB/s, each file fsynced), with {m.extra_disk_mib:.0f} MiB of extra disk at the "
            f"peak (both copies at once); the way back took {m.way_back_s:.1f} s (medians of 3 trials). The downtime "
            "grows with the data directory: about its size / the copy rate, plus a stop and a start.")
    return [*textwrap.wrap(said, 104), "Measured by:", f"  {RUN}",
            "Measure it at your size, on this kind of disk (TPC-C: about 100 MiB of tables a warehouse):",
            f"  tdebench run --engine mariadb --encryption fs:{layer} --workload encrypt --warehouses <N> --trials 3"]


def fs_text(setup: Setup) -> str:
    """The steps for ``setup`` (an ``fs:`` spec on mariadb or mysql)."""
    layer = "fscrypt" if setup.spec.cipher.startswith("fscrypt") else "gocryptfs"
    s = next(service for service in SERVICES if service.name == setup.engine)
    head = [f"# tdebench tde-setup --engine {setup.engine} --encryption {setup.spec}",
            "# Replace every <PLACEHOLDER>. tdebench prints placeholders only, never a password or a key.", "#"]
    notes = ([f"fscrypt (ext4/f2fs native encryption): the kernel encrypts the contents ({_cipher(setup)}) and names",
              "of every file below one directory. It cannot encrypt files that exist: the data directory is",
              "copied into a new, empty, encrypted directory on the same filesystem, with the server stopped."]
             if layer == "fscrypt" else
             [f"gocryptfs (FUSE): every file written through its mount is stored encrypted ({_cipher(setup)}) in a",
              "cipher directory. It cannot encrypt files that exist: the data directory is copied into the mount",
              "with the server stopped."])
    notes += ["", *_measured(layer), "",
              "What it protects: the files at rest (a stolen disk, a copied volume). Not: root on the running host",
              "(the layer is unlocked while the server runs), nor backups taken through the server."]
    lines = head + [f"# {n}" if n else "#" for n in notes]
    lines += _prepare_fscrypt(s) if layer == "fscrypt" else _prepare_gocryptfs(s)
    lines += _switch(s, layer) + _after(s, layer)
    return "\n".join(lines) + "\n"


def _cipher(setup: Setup) -> str:
    return {"fscrypt": "AES-256-XTS, names AES-256-CTS", "fscrypt-adiantum": "Adiantum",
            "gocryptfs": "AES-256-GCM", "gocryptfs-aessiv": "AES-SIV-512",
            "gocryptfs-xchacha": "XChaCha20-Poly1305"}.get(setup.spec.cipher, setup.spec.cipher)


def _prepare_fscrypt(s: Service) -> list[str]:
    return _step(1, "the filesystem of the data directory has the encrypt feature (shell, as root)") + [
        f"{s.client} -u root -p -e \"SELECT @@datadir\"            # <DATADIR>, e.g. /var/lib/mysql",
        "findmnt -no FSTYPE,SOURCE,TARGET -T <DATADIR>          # ext4 (or f2fs): <DEVICE>, <MOUNTPOINT>",
        "tune2fs -l <DEVICE> | grep -o encrypt                  # nothing printed: the feature is off",
        "tune2fs -O encrypt <DEVICE>                            # turns it on (ext4, e2fsprogs 1.43+; one way)",
        "apt-get install fscrypt                                # the userspace tool (policy v2)",
        "fscrypt setup && fscrypt setup <MOUNTPOINT>",
        "df -h <MOUNTPOINT>; du -sh <DATADIR>                   # the copy needs that much free space",
    ] + _step(2, "an empty encrypted directory on the same filesystem, with a key kept off this disk") + [
        f"install -d -o {s.user} -g {s.user} -m 0750 <NEW_DATADIR>      # e.g. <MOUNTPOINT>/mysql-encrypted",
        "( umask 077; head -c 32 /dev/urandom > <KEY_FILE> )    # keep it off the data's disk (TPM, key server,",
        "                                                       # a removable medium): whoever has it reads the data",
        "fscrypt encrypt <NEW_DATADIR> --source=raw_key --name=database --key=<KEY_FILE>",
        "fscrypt status <NEW_DATADIR>                           # Policy: v2, Unlocked: Yes",
    ]


def _prepare_gocryptfs(s: Service) -> list[str]:
    return _step(1, "gocryptfs, and room for a second copy (shell, as root)") + [
        f"{s.client} -u root -p -e \"SELECT @@datadir\"            # <DATADIR>, e.g. /var/lib/mysql",
        "apt-get install gocryptfs fuse3",
        "df -h <DATADIR>; du -sh <DATADIR>                      # the copy needs that much free space",
    ] + _step(2, f"the cipher directory and its mount, owned and run by {s.user} (no -allow_other)") + [
        f"install -d -o {s.user} -g {s.user} -m 0700 <CIPHER_DIR> <MOUNT_POINT>",
        f"( umask 077; openssl rand -base64 32 > <PASS_FILE> ); chown {s.user} <PASS_FILE>   # keep it off this disk",
        f"sudo -u {s.user} gocryptfs -init -passfile <PASS_FILE> <CIPHER_DIR>   # note the master key it prints, offline",
        f"sudo -u {s.user} gocryptfs -passfile <PASS_FILE> <CIPHER_DIR> <MOUNT_POINT>",
        "# run it as the server's user: gocryptfs 2.3 as root with -allow_other fails now and then with EPERM",
        "# (https://github.com/rfjakob/gocryptfs/issues/892, fixed in 2.5.1); a mount of that user alone is more private",
        f"sudo -u {s.user} install -d -m 0750 <MOUNT_POINT>/data",
        "# <NEW_DATADIR> below is <MOUNT_POINT>/data",
    ]


def _switch(s: Service, layer: str) -> list[str]:
    as_user = f"sudo -u {s.user} " if layer == "gocryptfs" else ""
    return _step(3, "the switch: stop, copy, point the server at the copy, start (the downtime)") + [
        f"systemctl stop {s.unit}",
        f"{as_user}cp -a <DATADIR>/. <NEW_DATADIR>/",
        f"{as_user}find <NEW_DATADIR> -type f -exec sync -- {{}} +   # each copied file on disk",
        f"cat > {s.option_file} <<'EOF'",
        s.group,
        "datadir = <NEW_DATADIR>",
        "EOF",
        "# AppArmor/SELinux: allow the server to read and write <NEW_DATADIR> (e.g. an alias in",
        "# /etc/apparmor.d/tunables/alias: alias /var/lib/mysql/ -> <NEW_DATADIR>/,)",
        f"systemctl start {s.unit}",
        f"{s.client} -u root -p -e \"SELECT @@datadir\"            # <NEW_DATADIR>/",
    ]


def _after(s: Service, layer: str) -> list[str]:
    unlock = ("ExecStartPre=/usr/bin/fscrypt unlock <NEW_DATADIR> --key=<KEY_FILE>" if layer == "fscrypt" else
              f"# a unit of its own for the mount (User={s.user}, gocryptfs -fg -passfile <PASS_FILE> ...), and here:\n"
              "Requires=<GOCRYPTFS_UNIT>\nAfter=<GOCRYPTFS_UNIT>")
    return _step(4, "the old plaintext copy: delete it, and know what deleting leaves") + [
        "# The old data directory is the whole database in the clear. Scan it (tdebench's switch found every",
        "# canary and all of TPC-C's known plaintext there), then delete it once the server serves from the copy:",
        "rm -rf <DATADIR>",
        "# Deleting frees its blocks without overwriting them: the plaintext stays on the device until they are",
        "# reused (fstrim on an SSD, a wipe of free space, or treat this disk as holding plaintext). Backups and",
        "# snapshots taken before the switch are plaintext too.",
    ] + _step(5, "at every boot, the layer unlocked before the server starts") + [
        f"systemctl edit {s.unit}      # a drop-in:",
        "[Unit]" if layer == "gocryptfs" else "[Service]",
        *unlock.splitlines(),
        "# where <KEY_FILE>/<PASS_FILE> lives at boot is what the encryption is worth: on the same disk, it",
        "# protects nothing against a stolen disk.",
        "",
        "# then measure the encrypted server, e.g.",
        f"#   tdebench run --target 'fs={s.client}://<TDEBENCH_USER>@<HOST>/<DATABASE>#fs:{layer}' \\",
        "#     --override-encryption-check fs --target ...   (a filesystem layer is declared, not seen by SQL)",
    ]
