//! The baseline of the cold-start benchmark: the smallest `lambda_http`
//! function (one route answering "hello"), built with the same profile as
//! `fund` and `scanner`.

use lambda_http::{Body, Error, Request, Response, run, service_fn};

async fn hello(_: Request) -> Result<Response<Body>, Error> {
    Ok(Response::new(Body::from("hello")))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    lambda_http::tracing::init_default_subscriber();
    run(service_fn(hello)).await
}
