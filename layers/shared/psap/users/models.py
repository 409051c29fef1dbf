"""The User and person-reference shapes of the spec, field for field, and the users page.

Absent values are null.
"""

from pydantic import Field

from psap.models import Timestamp, WireModel
from psap.spring_page import SpringPage


class User(WireModel):
    id: int
    tenant_id: int | None = None
    email: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    notification_email: str | None = None
    login_enabled: bool | None = None
    idp_sub: str | None = Field(default=None, description="Identity-provider subject")
    personnel_id: str | None = None
    role_id: int | None = None
    is_super_admin: bool | None = None
    is_system_user: bool | None = None
    mfa_enabled: bool | None = None
    last_login_at: Timestamp | None = None
    is_supervisor: bool | None = None
    is_template_publishing_allowed: bool | None = None
    vlr_identifier: str | None = None
    password_expires_at: Timestamp | None = None
    is_password_expired: bool | None = None
    is_support_user: bool | None = None
    investment_training_pipeline: bool | None = None


class PersonReference(WireModel):
    """A user as task lists and audit history name them."""

    id: int
    first_name: str | None = None
    last_name: str | None = None
    email: str | None = None
    notification_email: str | None = None

    @classmethod
    def of(cls, user: User) -> "PersonReference":
        return cls(
            id=user.id,
            first_name=user.first_name,
            last_name=user.last_name,
            email=user.email,
            notification_email=user.notification_email,
        )


class UserPage(SpringPage[User]):
    """Spring-style page whose content is users."""
