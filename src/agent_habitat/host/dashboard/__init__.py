# host/dashboard/: the live web page the host serves at `/` (DESIGN §2, issue 14).
#   index.html, app.css, app.js   the page itself: no build step, nothing from the network
#   core.js    what every view shares: state, the JSON API, the rendering loop (ES modules)
#   events.js, tabs.js, verify.js, timeline.js   the views: journal, tabs, epoch, time axis
#   page     the routes: `/`, its files, and the one-time login `habitat dashboard` asks for
#   login    one-time login codes, exchanged for a browser session (host/credentials.py)
#   tails    `POST /api/dashboard/tails`: the live tails of the cards in one request
from .login import Logins, forward_page
from .page import dashboard_routes

__all__ = ["Logins", "dashboard_routes", "forward_page"]
