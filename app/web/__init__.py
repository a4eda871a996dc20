"""The web app: `create_app(settings)`, its routes and the page shell."""
