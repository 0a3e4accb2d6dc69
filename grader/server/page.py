"""The students' page (``GET /``): log in with the token, hand in, read the history and the reports.

One small HTML page with no script; every sentence from the message catalogue (``server.page.*``), every value
escaped.
"""

from html import escape

from grader.messages import text

STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem; color: #222; }
table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #ddd; padding: .3rem; }
.note { background: #f3f3d8; padding: .5rem; } form { margin: 1rem 0; } .lang { float: right; }
"""


def render(*, lang, student, csrf, rows, message="", max_mb=20):
    """The page's HTML: the login form without ``student``, else the upload form (with ``csrf``) and ``rows``
    (the API's view of each submission, newest first)."""

    def t(key, **params):
        return escape(text(key, lang, **params))

    other = "zh" if lang == "en" else "en"
    parts = [
        "<!doctype html>",
        f'<html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{t('server.page.title')}</title><style>{STYLE}</style></head><body>",
        f'<a class="lang" href="/?lang={other}">{t("server.page.other_lang")}</a>',
        f"<h1>{t('server.page.title')}</h1>",
    ]
    if message:
        parts.append(f'<p class="note" role="status">{escape(message)}</p>')
    if student is None:
        parts += [
            f'<form method="post" action="/login?lang={lang}">',
            f'<label>{t("server.page.token")} <input name="token" type="password" autocomplete="off" required>',
            f"</label> <button>{t('server.page.login')}</button></form>",
        ]
    else:
        parts += [
            f"<p>{t('server.page.signed_in', student=student)}</p>",
            f'<form method="post" action="/logout?lang={lang}"><input type="hidden" name="csrf" value="{csrf}">',
            f"<button>{t('server.page.logout')}</button></form>",
            f"<h2>{t('server.page.hand_in')}</h2>",
            f"<p>{t('server.page.what', mb=max_mb)}</p>",
            f'<form method="post" action="/upload?lang={lang}" enctype="multipart/form-data">',
            f'<input type="hidden" name="csrf" value="{csrf}">',
            '<input type="file" name="file" multiple required accept=".py,.zip,.ipynb"> ',
            f"<button>{t('server.page.send')}</button></form>",
            f"<h2>{t('server.page.history')}</h2>",
        ]
        if not rows:
            parts.append(f"<p>{t('server.page.none')}</p>")
        else:
            parts.append(
                "<table><tr>"
                + "".join(
                    f"<th>{t(k)}</th>"
                    for k in ("server.page.id", "server.page.when", "server.page.status", "server.page.score")
                )
                + "<th></th></tr>"
            )
            for r in rows:
                score = f"{r['score']:g} / {r['max_score']:g}" if r["score"] is not None else ""
                late = f" ({t('server.page.late')})" if r["late"] else ""
                link = (
                    f'<a href="{escape(r["report"])}">{t("server.page.report")}</a>'
                    if r["report"]
                    else escape(r["reason"] or "")
                )
                parts.append(
                    f"<tr><td>{r['id']}</td><td>{escape(r['submitted'] or '')}{late}</td>"
                    f"<td>{t('server.status.' + r['status'])}</td><td>{escape(score)}</td><td>{link}</td></tr>"
                )
            parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)
