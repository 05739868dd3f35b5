"""Telling users the decision on their account by e-mail, when an SMTP server is configured.

The decision is recorded whether or not the message goes out (and the user sees it on their next
login either way); a failure to send is reported to the admin who decided, never hidden.
"""

from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage

from cowbird.frontend.accounts.models import State, User

SUBJECTS = {
    State.APPROVED: "Your cowbird account is approved",
    State.DENIED: "Your cowbird registration was not approved",
    State.SUSPENDED: "Your cowbird account is suspended",
}


@dataclass(frozen=True)
class Mailer:
    host: str
    port: int = 25
    sender: str = "cowbird@localhost"
    starttls: bool = False
    user: str = ""
    password: str = ""
    site: str = ""  # the public URL, for the link in the message
    timeout: float = 10.0

    def message(self, user: User, state: State, reason: str) -> EmailMessage:
        message = EmailMessage()
        message["From"], message["To"], message["Subject"] = self.sender, user.email, SUBJECTS[state]
        lines = [f"Dear {user.name},", ""]
        if state is State.APPROVED:
            lines.append("your account is approved: you can log in and search the corpora open to you.")
        elif state is State.DENIED:
            lines.append("your registration was not approved.")
        else:
            lines.append("your account is suspended.")
        if reason.strip():
            lines += ["", f"Reason: {reason.strip()}"]
        if self.site:
            lines += ["", f"{self.site.rstrip('/')}/login"]
        message.set_content("\n".join(lines) + "\n")
        return message

    def send(self, user: User, state: State, reason: str) -> str | None:
        """Send the decision; None when sent, else why not (for the admin to see)."""
        if state not in SUBJECTS:
            return None
        try:
            with smtplib.SMTP(self.host, self.port, timeout=self.timeout) as smtp:
                if self.starttls:
                    smtp.starttls(context=ssl.create_default_context())
                if self.user:
                    smtp.login(self.user, self.password)
                smtp.send_message(self.message(user, state, reason))
        except (OSError, smtplib.SMTPException) as exc:
            return f"the e-mail to {user.email} could not be sent: {exc}"
        return None
