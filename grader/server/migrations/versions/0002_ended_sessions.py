"""Ended page sessions: a log-out ends its session on the server, not only in the browser that logged out.

One row per session logged out of before it expired: the HMAC, under the server's key, of the session cookie's
signature (never the cookie), the cookie's expiry (a row past it is purged: the cookie is refused for its age
anyway) and when it was ended. The rows already there are left as they are.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-06
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

# The columns as they are at this revision, written out rather than taken from store.py (see 0001).


def upgrade() -> None:
    op.create_table(
        "ended_sessions",
        sa.Column("signature_hash", sa.String(64), primary_key=True),
        sa.Column("expires", sa.Float, nullable=False),
        sa.Column("ended", sa.Float, nullable=False),
    )
    op.create_index("ix_ended_sessions_expires", "ended_sessions", ["expires"])


def downgrade() -> None:
    op.drop_index("ix_ended_sessions_expires", table_name="ended_sessions")
    op.drop_table("ended_sessions")
