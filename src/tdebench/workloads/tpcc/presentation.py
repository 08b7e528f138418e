"""How a TPC-C run is shown: TPM and NOPM per virtual-user step, latency per transaction kind, the consistency
conditions checked after every trial (tdebench.api.presentation)."""

from __future__ import annotations

from tdebench.api.presentation import Presentation, Rate, Section, StepGroup
from tdebench.workloads.oltp_presentation import LATENCIES, OLTP_METRICS, WRITE_COSTS
from tdebench.workloads.tpcc.txns import KINDS

TEST = "tpcc"
# TPC-C clause 3.3.2; "null" is tdebench's O_CARRIER_ID 0 / OL_DELIVERY_D 1900-01-01
CONDITION_TEXTS = {
    "1": "W_YTD = sum(D_YTD)",
    "2": "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID)",
    "3": "max(NO_O_ID) - min(NO_O_ID) + 1 = NEW-ORDER rows",
    "4": "sum(O_OL_CNT) = ORDER-LINE rows, per district",
    "5": "O_CARRIER_ID null iff a NEW-ORDER row exists",
    "6": "O_OL_CNT = ORDER-LINE rows, per order",
    "7": "OL_DELIVERY_D null iff O_CARRIER_ID null",
    "8": "W_YTD = sum(H_AMOUNT)",
    "9": "D_YTD = sum(H_AMOUNT)",
    "10": "C_BALANCE = sum(delivered OL_AMOUNT) - sum(H_AMOUNT)",
    "11": "count(ORDER) - count(NEW-ORDER) = 2100",
    "12": "C_BALANCE + C_YTD_PAYMENT = sum(delivered OL_AMOUNT)",
}
CONSISTENCY_NOTE = (
    "Checked after every trial, on the data the trial left (TPC-C clause 3.3.2). tdebench stores no NULL: an "
    "undelivered order has O_CARRIER_ID 0 and its lines OL_DELIVERY_D 1900-01-01, which is what \"null\" means "
    "here. Condition 11 is not checked: it holds only until the first Delivery. A trial that violates a "
    "condition fails; the cell says in how many trials that happened and the largest count of violating rows.")

PRESENTATION = Presentation(
    title="TPC-C-like OLTP",
    layout="rates",
    metrics={**OLTP_METRICS, "tpm": "TPM", "nopm": "NOPM"},
    rates=(Rate("tpm", "TPM", "TPM: committed transactions of all five kinds per minute of the measured window "
                              "(after ramp-up)."),
           Rate("nopm", "NOPM", "NOPM: committed New-Order transactions per minute; about 0.44 x TPM with the "
                                "standard mix.")),
    latency_kinds=KINDS,
    step_groups=(StepGroup(TEST, "TPC-C-like OLTP per virtual-user step",
                           ("tpm", "nopm", *LATENCIES, "server_cpu_per_txn", *WRITE_COSTS)),),
    sections=(Section("conditions", "TPC-C consistency", test=TEST, step="consistency", note=CONSISTENCY_NOTE,
                      texts=CONDITION_TEXTS),),
)
