// The signed-in pages under /app.
import { match } from "../router";
import { Environments, Overview, Settings, Shell } from "./app";
import { CustomerPage, Customers } from "./customers";
import { EventDetail, Events } from "./events";
import { Keys } from "./keys";
import { RequestDetail, RequestLog } from "./logs";
import { SearchPage } from "./search";
import { WebhookDetail, Webhooks } from "./webhooks";
import { Witnesses } from "./witnesses";
import { PageTitle } from "../ui";

export function AppPages({ path }: { path: string }) {
  let page;
  let m: Record<string, string> | null;
  if (path === "/app") page = <Overview />;
  else if (path === "/app/environments") page = <Environments />;
  else if (path === "/app/keys") page = <Keys />;
  else if (path === "/app/webhooks") page = <Webhooks />;
  else if ((m = match("/app/webhooks/:id", path))) page = <WebhookDetail id={m.id ?? ""} key={m.id} />;
  else if (path === "/app/customers") page = <Customers />;
  else if ((m = match("/app/customers/:id", path))) page = <CustomerPage id={m.id ?? ""} key={m.id} />;
  else if (path === "/app/settings") page = <Settings />;
  else if (path === "/app/logs") page = <RequestLog />;
  else if ((m = match("/app/logs/:id", path))) page = <RequestDetail id={m.id ?? ""} key={m.id} />;
  else if (path === "/app/events") page = <Events />;
  else if ((m = match("/app/events/:id", path))) page = <EventDetail id={m.id ?? ""} key={m.id} />;
  else if (path === "/app/search") page = <SearchPage />;
  else if (path === "/app/witnesses") page = <Witnesses />;
  else
    page = (
      <section>
        <PageTitle title="Page not found">Page not found</PageTitle>
        <p>There is no dashboard page at {path}.</p>
      </section>
    );
  return <Shell path={path}>{page}</Shell>;
}
