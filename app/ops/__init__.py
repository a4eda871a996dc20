"""Running the lab for a whole course on the internet: request limits, rate limits,
security headers, request ids, structured logs and metrics. The web layer (app/web)
installs these around its routes; nothing here knows a route's meaning."""
