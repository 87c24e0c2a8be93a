// The machine's pacing floor (bench/run.sh's FLOOR row): how late a thread that does
// nothing else observes periodic deadlines, sleeping until each (clock_nanosleep on
// the absolute time, then a spin to the deadline) or only spinning on
// CLOCK_MONOTONIC. No client that sleeps can pace better than the first, none at all
// better than the second: a virtual CPU's stalls show in both.
// usage: timer_floor RATE SECONDS sleep|spin
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
static long long ns(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1000000000LL+t.tv_nsec;}
static int cmp(const void*a,const void*b){long long x=*(long long*)a,y=*(long long*)b;return x<y?-1:x>y;}
int main(int c,char**v){
  if(c<4){fprintf(stderr,"usage: timer_floor RATE SECONDS sleep|spin\n");return 2;}
  // No timer slack: rshperf sleeps on a timerfd, which has none.
  prctl(PR_SET_TIMERSLACK,1UL,0,0,0);
  double rate=atof(v[1]),secs=atof(v[2]);int spin=!strcmp(v[3],"spin");
  long n=(long)(rate*secs);long long P=(long long)(1e9/rate);
  long long*late=malloc(n*sizeof(long long));
  long long t0=ns()+1000000;
  for(long k=0;k<n;k++){
    long long due=t0+k*P;
    if(!spin){struct timespec ts={due/1000000000LL,due%1000000000LL};clock_nanosleep(CLOCK_MONOTONIC,TIMER_ABSTIME,&ts,NULL);}
    long long now;while((now=ns())<due){}
    late[k]=now-due;
  }
  qsort(late,n,sizeof(long long),cmp);
  printf("%s %.0f/s n=%ld lateness us: p50 %.1f p90 %.1f p99 %.1f p99.9 %.1f max %.1f\n",v[3],rate,n,
    late[n/2]/1e3,late[n*9/10]/1e3,late[n*99/100]/1e3,late[n*999/1000]/1e3,late[n-1]/1e3);
  return 0;
}
